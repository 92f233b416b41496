package io.vkspark.gpu.internal;

import static org.lwjgl.system.MemoryStack.stackPush;
import static org.lwjgl.vulkan.EXTDebugUtils.*;
import static org.lwjgl.vulkan.EXTValidationFeatures.*;
import static org.lwjgl.vulkan.VK10.*;
import static org.lwjgl.vulkan.VK11.*;
import static org.lwjgl.vulkan.VK12.*;

import io.vkspark.gpu.DeviceFeatures;
import io.vkspark.gpu.DeviceInfo;
import io.vkspark.gpu.DeviceType;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import java.nio.ByteBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.lwjgl.PointerBuffer;
import org.lwjgl.system.MemoryStack;
import org.lwjgl.vulkan.VK;
import org.lwjgl.vulkan.VkApplicationInfo;
import org.lwjgl.vulkan.VkDebugUtilsMessengerCallbackDataEXT;
import org.lwjgl.vulkan.VkDebugUtilsMessengerCallbackEXT;
import org.lwjgl.vulkan.VkDebugUtilsMessengerCreateInfoEXT;
import org.lwjgl.vulkan.VkInstance;
import org.lwjgl.vulkan.VkInstanceCreateInfo;
import org.lwjgl.vulkan.VkLayerProperties;
import org.lwjgl.vulkan.VkPhysicalDevice;
import org.lwjgl.vulkan.VkPhysicalDeviceDriverProperties;
import org.lwjgl.vulkan.VkPhysicalDeviceFloatControlsProperties;
import org.lwjgl.vulkan.VkPhysicalDeviceFeatures2;
import org.lwjgl.vulkan.VkPhysicalDeviceIDProperties;
import org.lwjgl.vulkan.VkPhysicalDeviceLimits;
import org.lwjgl.vulkan.VkPhysicalDeviceMemoryProperties;
import org.lwjgl.vulkan.VkPhysicalDeviceProperties2;
import org.lwjgl.vulkan.VkPhysicalDeviceSubgroupProperties;
import org.lwjgl.vulkan.VkPhysicalDeviceVulkan11Features;
import org.lwjgl.vulkan.VkPhysicalDeviceVulkan12Features;
import org.lwjgl.vulkan.VkQueueFamilyProperties;
import org.lwjgl.vulkan.VkValidationFeaturesEXT;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Vulkan instance, its optional validation layer and debug messenger, and the physical devices
 * it sees.
 *
 * <p>One instance per process (one with validation, one without) is shared by every device:
 * NVIDIA's driver (580) refuses {@code vkCreateInstance} with VK_ERROR_INCOMPATIBLE_DRIVER after 30
 * create/destroy cycles in one process (measured on the H200 machine), so devices reference-count
 * it. It is destroyed once no device uses it: after a grace period ({@code
 * -Dvkspark.instance.graceMillis}, default 10 s) so that devices opened one after another reuse it,
 * and at once when the JVM is shutting down. Both happen on one owner thread (see {@link #onOwner}).
 * Measured on the H200 (driver 580.159): a process that exits with the instance alive dies with
 * SIGSEGV (exit code 134) after all its work is done, and so does one that destroys the instance
 * on another thread than the one that created it; creating and destroying on one thread exits 0.
 */
public final class VulkanInstance implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(VulkanInstance.class);
  static final String VALIDATION_LAYER = "VK_LAYER_KHRONOS_validation";
  /** Set to 1 (as {@code make test} does) to make a missing validation layer an error. */
  public static final String REQUIRED_ENV = "VKSPARK_VALIDATION_REQUIRED";
  private static final int MAX_MESSAGES = 200;
  private static boolean loaded;
  private static final Map<Boolean, VulkanInstance> SHARED = new HashMap<>();
  private static final long GRACE_MS = Long.getLong("vkspark.instance.graceMillis", 10_000L);
  /** How long the exit hook waits for devices other shutdown hooks are closing (see {@link #onExit}). */
  private static final long EXIT_WAIT_MS = Long.getLong("vkspark.instance.exitWaitMillis", 7_000L);
  /** Creates, destroys and counts the shared instances; all lifecycle state is confined to it. */
  private static final ScheduledExecutorService OWNER = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "vkspark-vulkan-instance");
    t.setDaemon(true);
    ownerThread = t;
    return t;
  });
  private static volatile Thread ownerThread;
  private static boolean exiting;
  private static boolean hookAdded;
  private static int created;
  private int users;
  private ScheduledFuture<?> pendingDestroy;
  private final boolean validation;
  private boolean destroyed;

  final VkInstance handle;
  private final long messenger;
  private final VkDebugUtilsMessengerCallbackEXT callback;
  private final AtomicLong validationErrors = new AtomicLong();
  private final List<String> messages = Collections.synchronizedList(new ArrayList<>());

  /** A physical device with what vkspark needs to open it. */
  record Physical(VkPhysicalDevice handle, DeviceInfo info, int queueFamily, int timestampValidBits,
                  int apiVersion) {}

  private VulkanInstance(boolean validation) {
    this.validation = validation;
    load();
    try (MemoryStack stack = stackPush()) {
      List<String> layers = new ArrayList<>();
      List<String> extensions = new ArrayList<>();
      boolean layer = validation && layerOrWarn(stack);
      if (layer) {
        layers.add(VALIDATION_LAYER);
        extensions.add(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
      }
      VkApplicationInfo app = VkApplicationInfo.calloc(stack)
          .sType$Default()
          .pApplicationName(stack.UTF8("vkspark"))
          .applicationVersion(1)
          .pEngineName(stack.UTF8("vkspark"))
          .apiVersion(VK_API_VERSION_1_2);
      VkInstanceCreateInfo ci = VkInstanceCreateInfo.calloc(stack)
          .sType$Default()
          .pApplicationInfo(app)
          .ppEnabledLayerNames(strings(stack, layers))
          .ppEnabledExtensionNames(strings(stack, extensions));
      VkDebugUtilsMessengerCreateInfoEXT dci = null;
      VkDebugUtilsMessengerCallbackEXT cb = null;
      if (layer) {
        cb = VkDebugUtilsMessengerCallbackEXT.create(this::onMessage);
        dci = VkDebugUtilsMessengerCreateInfoEXT.calloc(stack)
            .sType$Default()
            .messageSeverity(VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT
                | VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT)
            .messageType(VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT
                | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT
                | VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT)
            .pfnUserCallback(cb);
        // Synchronization validation catches missing barriers, the bug class replay invites.
        VkValidationFeaturesEXT features = VkValidationFeaturesEXT.calloc(stack)
            .sType$Default()
            .pEnabledValidationFeatures(stack.ints(VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT));
        dci.pNext(features.address());
        ci.pNext(dci.address());
      }
      PointerBuffer pp = stack.mallocPointer(1);
      int r = vkCreateInstance(ci, null, pp);
      if (r != VK_SUCCESS) {
        if (cb != null) {
          cb.free();
        }
        throw Vk.error(r, "vkCreateInstance");
      }
      this.handle = new VkInstance(pp.get(0), ci);
      this.callback = cb;
      if (layer) {
        LongBuffer pm = stack.mallocLong(1);
        dci.pNext(0);
        Vk.check(vkCreateDebugUtilsMessengerEXT(handle, dci, null, pm), "vkCreateDebugUtilsMessengerEXT");
        this.messenger = pm.get(0);
      } else {
        this.messenger = VK_NULL_HANDLE;
      }
    }
  }

  /**
   * Whether the validation layer is there; when it is not, fails if {@link #REQUIRED_ENV} is set
   * (what {@code make test} does) and otherwise warns, so that a machine with only the Vulkan
   * runtime still runs: validation is a debugging aid, not part of the results.
   */
  private static boolean layerOrWarn(MemoryStack stack) {
    if (hasLayer(stack, VALIDATION_LAYER)) {
      return true;
    }
    if (validationRequired()) {
      throw GpuException.of(Code.NO_VULKAN,
          "validation was requested but the layer " + VALIDATION_LAYER + " is not installed, and "
              + REQUIRED_ENV + " is set.",
          "install it (Debian: apt-get install vulkan-validationlayers, or run scripts/ensure-vulkan.sh as root), "
              + "or unset " + REQUIRED_ENV + " to run without validation.");
    }
    LOG.warn("validation was requested but the layer {} is not installed, so Vulkan runs without validation "
        + "(nothing is checked, results are the same). Fix: install it (Debian: apt-get install "
        + "vulkan-validationlayers, or run scripts/ensure-vulkan.sh as root) to have Vulkan usage checked.",
        VALIDATION_LAYER);
    return false;
  }

  static boolean validationRequired() {
    String v = System.getenv(REQUIRED_ENV);
    return v != null && !v.isEmpty() && !v.equals("0") && !v.equalsIgnoreCase("false");
  }

  /** Whether the Vulkan loader finds the Khronos validation layer (it may be hidden by VK_LAYER_PATH). */
  public static boolean validationLayerInstalled() {
    load();
    try (MemoryStack stack = stackPush()) {
      return hasLayer(stack, VALIDATION_LAYER);
    }
  }

  /** The process's shared instance with or without validation; {@link #release()} when done. */
  static VulkanInstance acquire(boolean validation) {
    return onOwner(() -> {
      if (exiting) {
        throw GpuException.of(Code.CLOSED, "the JVM is shutting down, so no Vulkan device can be opened now.",
            "open devices before the application ends (e.g. do not start GPU work from a shutdown hook).");
      }
      if (!hookAdded) {
        Runtime.getRuntime().addShutdownHook(new Thread(VulkanInstance::onExit, "vkspark-instance-exit"));
        hookAdded = true;
      }
      VulkanInstance instance = SHARED.get(validation);
      if (instance == null) {
        instance = new VulkanInstance(validation);
        SHARED.put(validation, instance);
        created++;
        LOG.debug("created Vulkan instance #{} (validation {})", created, validation);
      }
      if (instance.pendingDestroy != null) {
        instance.pendingDestroy.cancel(false);
        instance.pendingDestroy = null;
      }
      instance.users++;
      return instance;
    });
  }

  /**
   * Drops one reference. The last one schedules the instance's destruction after the grace period,
   * or destroys it at once while the JVM shuts down (see the class comment).
   */
  void release() {
    onOwner(() -> {
      if (--users > 0) {
        return null;
      }
      if (exiting || GRACE_MS <= 0) {
        destroyShared();
      } else {
        pendingDestroy = OWNER.schedule(() -> {
          if (users == 0 && pendingDestroy != null) {
            destroyShared();
          }
        }, GRACE_MS, TimeUnit.MILLISECONDS);
      }
      return null;
    });
  }

  /** Destroys this shared instance now; runs on the owner thread, with no device using it. */
  private void destroyShared() {
    pendingDestroy = null;
    if (SHARED.get(validation) == this) {
      SHARED.remove(validation);
    }
    if (!destroyed) {
      destroyed = true;
      LOG.debug("destroying the Vulkan instance (validation {}, exiting {})", validation, exiting);
      close();
      LOG.debug("destroyed the Vulkan instance (validation {})", validation);
    }
  }

  /**
   * The JVM is exiting: destroy every instance no device uses; one still in use is destroyed when
   * its last device closes. Other shutdown hooks close their devices concurrently (Spark's
   * ShutdownHookManager stops the SparkContext, and with it the executor's device, some 100 ms after
   * a SIGTERM; an executor's stop may run on its own thread), so this hook waits up to
   * {@code -Dvkspark.instance.exitWaitMillis} (default 7 s, past the executor's 5 s wait for its
   * tasks) for them: the JVM halts only after every hook returns, so the instance is then gone
   * before the process ends, and only a device nobody closes is worth a warning.
   */
  private static void onExit() {
    int open = onOwner(() -> {
      exiting = true;
      for (VulkanInstance i : List.copyOf(SHARED.values())) {
        if (i.users == 0) {
          i.destroyShared();
        }
      }
      return openDevices();
    });
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(EXIT_WAIT_MS);
    if (open > 0) {
      LOG.debug("the JVM exits with {} Vulkan device(s) open: waiting up to {} ms for them to close", open, EXIT_WAIT_MS);
    }
    while (open > 0 && System.nanoTime() < deadline) {
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        break;
      }
      open = onOwner(VulkanInstance::openDevices);
    }
    if (open > 0) {
      LOG.warn("the JVM exits with {} Vulkan device(s) still open {} ms after it began to exit; close every GpuDevice "
          + "before exit, or the NVIDIA driver may crash the process as it exits", open, EXIT_WAIT_MS);
    }
  }

  /** Devices open on the shared instances (owner thread only). */
  private static int openDevices() {
    return SHARED.values().stream().mapToInt(i -> i.users).sum();
  }

  /**
   * Runs {@code task} on the owner thread and waits for it. NVIDIA's driver (580) crashes the
   * process when vkDestroyInstance runs on another thread than vkCreateInstance did (measured on
   * the H200: the creating thread destroys cleanly, any other thread SIGSEGVs), so one thread does
   * both, whichever thread opens or closes a device. Waits through interrupts (a killed Spark task
   * may close a device) and restores the flag.
   */
  private static <T> T onOwner(Callable<T> task) {
    if (Thread.currentThread() == ownerThread) {
      try {
        return task.call();
      } catch (RuntimeException | Error e) {
        throw e;
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }
    return Futures.awaitUninterruptibly(OWNER.submit(task));
  }

  /** How many instances this process has created (NVIDIA refuses more than about 30). */
  static int instancesCreated() {
    return onOwner(() -> created);
  }

  /** Whether an instance (with or without validation) is alive now, for tests. */
  static boolean alive(boolean validation) {
    return onOwner(() -> SHARED.containsKey(validation));
  }

  /** Lists devices through the shared instance. */
  public static List<DeviceInfo> listDevices() {
    VulkanInstance instance = acquire(false);
    try {
      return instance.physicalDevices().stream().map(Physical::info).toList();
    } finally {
      instance.release();
    }
  }

  private static synchronized void load() {
    if (loaded) {
      return;
    }
    try {
      // VK's static initializer loads the loader itself unless explicit init is configured.
      if (VK.getFunctionProvider() == null) {
        VK.create();
      }
      loaded = true;
    } catch (Throwable t) {
      throw new GpuException(Code.NO_VULKAN,
          "the Vulkan loader (libvulkan.so.1) could not be loaded: " + t.getMessage()
              + ". Fix: install a Vulkan loader and driver (Debian: apt-get install libvulkan1 mesa-vulkan-drivers;"
              + " on NVIDIA the driver's ICD plus libvulkan1), or run 'make test' which installs them.", t);
    }
  }

  private int onMessage(int severity, int types, long pCallbackData, long userData) {
    String msg = VkDebugUtilsMessengerCallbackDataEXT.create(pCallbackData).pMessageString();
    boolean error = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) != 0;
    if (error) {
      validationErrors.incrementAndGet();
      LOG.error("Vulkan validation: {}", msg);
    } else {
      LOG.warn("Vulkan validation: {}", msg);
    }
    if (messages.size() < MAX_MESSAGES) {
      messages.add((error ? "ERROR " : "WARNING ") + msg);
    }
    return VK_FALSE;
  }

  long validationErrors() {
    return validationErrors.get();
  }

  List<String> validationMessages() {
    synchronized (messages) {
      return List.copyOf(messages);
    }
  }

  /** Messages from index {@code from} on (a device's share of a shared instance's messages). */
  List<String> validationMessagesFrom(int from) {
    synchronized (messages) {
      return List.copyOf(messages.subList(Math.min(from, messages.size()), messages.size()));
    }
  }

  int messageCount() {
    return messages.size();
  }

  private static boolean hasLayer(MemoryStack stack, String name) {
    IntBuffer n = stack.mallocInt(1);
    Vk.check(vkEnumerateInstanceLayerProperties(n, null), "vkEnumerateInstanceLayerProperties");
    try (VkLayerProperties.Buffer props = VkLayerProperties.malloc(n.get(0))) {
      Vk.check(vkEnumerateInstanceLayerProperties(n, props), "vkEnumerateInstanceLayerProperties");
      for (VkLayerProperties p : props) {
        if (p.layerNameString().equals(name)) {
          return true;
        }
      }
    }
    return false;
  }

  private static PointerBuffer strings(MemoryStack stack, List<String> values) {
    if (values.isEmpty()) {
      return null;
    }
    PointerBuffer p = stack.mallocPointer(values.size());
    values.forEach(v -> p.put(stack.UTF8(v)));
    return p.flip();
  }

  /** Every physical device that supports Vulkan 1.2 and has a compute queue, in Vulkan's order. */
  List<Physical> physicalDevices() {
    try (MemoryStack stack = stackPush()) {
      IntBuffer n = stack.mallocInt(1);
      Vk.check(vkEnumeratePhysicalDevices(handle, n, null), "vkEnumeratePhysicalDevices");
      PointerBuffer pp = stack.mallocPointer(n.get(0));
      Vk.check(vkEnumeratePhysicalDevices(handle, n, pp), "vkEnumeratePhysicalDevices");
      List<Physical> out = new ArrayList<>();
      for (int i = 0; i < pp.capacity(); i++) {
        Physical p = describe(i, new VkPhysicalDevice(pp.get(i), handle));
        if (p != null) {
          out.add(p);
        }
      }
      return out;
    }
  }

  private static Physical describe(int index, VkPhysicalDevice pd) {
    try (MemoryStack stack = stackPush()) {
      VkPhysicalDeviceIDProperties id = VkPhysicalDeviceIDProperties.calloc(stack).sType$Default();
      VkPhysicalDeviceSubgroupProperties subgroup = VkPhysicalDeviceSubgroupProperties.calloc(stack).sType$Default();
      VkPhysicalDeviceDriverProperties driver = VkPhysicalDeviceDriverProperties.calloc(stack).sType$Default();
      VkPhysicalDeviceFloatControlsProperties floats = VkPhysicalDeviceFloatControlsProperties.calloc(stack).sType$Default();
      VkPhysicalDeviceProperties2 props = VkPhysicalDeviceProperties2.calloc(stack).sType$Default();
      vkGetPhysicalDeviceProperties(pd, props.properties());
      int api = props.properties().apiVersion();
      String name = props.properties().deviceNameString();
      if (VK_API_VERSION_MINOR(api) < 2 && VK_API_VERSION_MAJOR(api) == 1) {
        LOG.info("skipping Vulkan device #{} '{}': Vulkan {} is older than the 1.2 vkspark needs", index, name, Vk.version(api));
        return null;
      }
      props.pNext(id.address());
      id.pNext(subgroup.address());
      subgroup.pNext(driver.address());
      driver.pNext(floats.address());
      vkGetPhysicalDeviceProperties2(pd, props);

      VkPhysicalDeviceVulkan11Features f11 = VkPhysicalDeviceVulkan11Features.calloc(stack).sType$Default();
      VkPhysicalDeviceVulkan12Features f12 = VkPhysicalDeviceVulkan12Features.calloc(stack).sType$Default();
      VkPhysicalDeviceFeatures2 f = VkPhysicalDeviceFeatures2.calloc(stack).sType$Default().pNext(f11.address());
      f11.pNext(f12.address());
      vkGetPhysicalDeviceFeatures2(pd, f);
      DeviceFeatures features = new DeviceFeatures(
          f.features().shaderInt64(), f.features().shaderFloat64(),
          f12.storageBuffer8BitAccess(), f11.storageBuffer16BitAccess(),
          f.features().robustBufferAccess(), f12.hostQueryReset(),
          floats.shaderDenormPreserveFloat32(), floats.shaderDenormPreserveFloat64());

      IntBuffer nq = stack.mallocInt(1);
      vkGetPhysicalDeviceQueueFamilyProperties(pd, nq, null);
      VkQueueFamilyProperties.Buffer qf = VkQueueFamilyProperties.malloc(nq.get(0), stack);
      vkGetPhysicalDeviceQueueFamilyProperties(pd, nq, qf);
      int family = -1;
      int bits = -1;
      for (int q = 0; q < qf.capacity(); q++) {
        VkQueueFamilyProperties p = qf.get(q);
        if ((p.queueFlags() & VK_QUEUE_COMPUTE_BIT) != 0 && p.timestampValidBits() > bits) {
          family = q;
          bits = p.timestampValidBits();
        }
      }
      if (family < 0) {
        LOG.info("skipping Vulkan device #{} '{}': no compute queue", index, name);
        return null;
      }

      VkPhysicalDeviceMemoryProperties mem = VkPhysicalDeviceMemoryProperties.malloc(stack);
      vkGetPhysicalDeviceMemoryProperties(pd, mem);
      long deviceLocal = 0;
      for (int h = 0; h < mem.memoryHeapCount(); h++) {
        if ((mem.memoryHeaps(h).flags() & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0) {
          deviceLocal = Math.max(deviceLocal, mem.memoryHeaps(h).size());
        }
      }
      boolean direct = false;
      for (int t = 0; t < mem.memoryTypeCount(); t++) {
        int flags = mem.memoryTypes(t).propertyFlags();
        int want = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
        if ((flags & want) == want) {
          // A 256 MiB BAR window is not ReBAR: count only heaps as large as device memory.
          if (mem.memoryHeaps(mem.memoryTypes(t).heapIndex()).size() >= deviceLocal) {
            direct = true;
          }
        }
      }

      VkPhysicalDeviceLimits limits = props.properties().limits();
      DeviceInfo info = new DeviceInfo(
          index, name, type(props.properties().deviceType()), uuid(id.deviceUUID()),
          props.properties().vendorID(), props.properties().deviceID(), Vk.version(api),
          driver.driverNameString() + ": " + driver.driverInfoString(),
          Math.max(1, subgroup.subgroupSize()),
          limits.maxComputeWorkGroupCount(0), limits.maxComputeWorkGroupSize(0),
          Integer.toUnsignedLong(limits.maxStorageBufferRange()),
          Integer.toUnsignedLong(limits.maxUniformBufferRange()),
          bits > 0 ? limits.timestampPeriod() : 0,
          features, direct, deviceLocal);
      return new Physical(pd, info, family, Math.max(bits, 0), api);
    }
  }

  private static DeviceType type(int t) {
    return switch (t) {
      case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU -> DeviceType.DISCRETE_GPU;
      case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU -> DeviceType.INTEGRATED_GPU;
      case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU -> DeviceType.VIRTUAL_GPU;
      case VK_PHYSICAL_DEVICE_TYPE_CPU -> DeviceType.CPU;
      default -> DeviceType.OTHER;
    };
  }

  static String uuid(ByteBuffer b) {
    StringBuilder s = new StringBuilder(36);
    for (int i = 0; i < 16; i++) {
      if (i == 4 || i == 6 || i == 8 || i == 10) {
        s.append('-');
      }
      s.append(String.format("%02x", b.get(b.position() + i) & 0xff));
    }
    return s.toString();
  }

  @Override
  public void close() {
    if (messenger != VK_NULL_HANDLE) {
      vkDestroyDebugUtilsMessengerEXT(handle, messenger, null);
    }
    vkDestroyInstance(handle, null);
    if (callback != null) {
      callback.free();
    }
  }
}
