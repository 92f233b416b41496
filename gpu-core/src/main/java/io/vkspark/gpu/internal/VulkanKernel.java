package io.vkspark.gpu.internal;

import static org.lwjgl.system.MemoryStack.stackPush;
import static org.lwjgl.vulkan.VK10.*;

import io.vkspark.gpu.BufferDecl;
import io.vkspark.gpu.BufferRole;
import io.vkspark.gpu.CacheStats;
import io.vkspark.gpu.DispatchStep;
import io.vkspark.gpu.DoubleRounding;
import io.vkspark.gpu.GpuBuffer;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.Groups;
import io.vkspark.gpu.Kernel;
import io.vkspark.gpu.PrerecordedDispatch;
import io.vkspark.gpu.Program;
import io.vkspark.gpu.TimedDispatch;
import java.nio.ByteBuffer;
import java.nio.LongBuffer;
import java.util.ArrayList;
import java.util.List;
import org.lwjgl.system.MemoryStack;
import org.lwjgl.system.MemoryUtil;
import org.lwjgl.vulkan.VkComputePipelineCreateInfo;
import org.lwjgl.vulkan.VkDescriptorSetLayoutBinding;
import org.lwjgl.vulkan.VkDescriptorSetLayoutCreateInfo;
import org.lwjgl.vulkan.VkPipelineLayoutCreateInfo;
import org.lwjgl.vulkan.VkShaderModuleCreateInfo;
import org.lwjgl.vulkan.VkSpecializationInfo;
import org.lwjgl.vulkan.VkSpecializationMapEntry;

/**
 * A compute pipeline with its layouts and descriptor-set cache. The workgroup size is passed as
 * specialization constant 0, so shaders declare {@code layout(local_size_x_id = 0) in;}; constant 1
 * is the probe's fused-{@code fma} verdict (a {@code bool}, vkmath's {@code VKM_FUSED_FMA}), so the
 * SPIR-V stays the same for every device and the driver drops the form it does not use.
 */
final class VulkanKernel implements Kernel, VulkanDevice.Child {
  private final VulkanDevice device;
  private final Program program;
  private final long shaderModule;
  final long[] setLayouts;
  final long pipelineLayout;
  final long pipeline;
  final DescriptorSetCache descriptors;
  private volatile boolean closed;

  private VulkanKernel(VulkanDevice device, Program program, long shaderModule, long[] setLayouts,
                       long pipelineLayout, long pipeline) {
    this.device = device;
    this.program = program;
    this.shaderModule = shaderModule;
    this.setLayouts = setLayouts;
    this.pipelineLayout = pipelineLayout;
    this.pipeline = pipeline;
    this.descriptors = new DescriptorSetCache(device, setLayouts);
  }

  /**
   * Creates the pipeline from the SPIR-V after {@link KernelPasses} (with {@code rounding} null:
   * exactly as compiled, for the probe).
   */
  static VulkanKernel create(VulkanDevice device, Program program, DoubleRounding rounding) {
    byte[] spirv = program.spirvCode().orElseGet(() ->
        GlslCompiler.compileOrThrow(program.name() + ".comp", program.glslSource().orElseThrow(),
            device.options().shaderCacheDir(), code -> SpirvSeal.check(program, code)));
    SpirvSeal.check(program, spirv);
    spirv = SpirvSeal.forDevice(program, spirv, device.info().features());
    spirv = KernelPasses.forDevice(program, spirv, device.info().features(), rounding, device.float32Mode(),
        device.simulatesFlush());
    SpirvSeal.requireFeatures(program, spirv, device.info().features(), "device '" + device.info().name() + "'");
    if (program.workgroupSize() > device.info().maxWorkgroupSizeX()) {
      throw GpuException.of(Code.UNSUPPORTED, "program '" + program.name() + "' asks for workgroups of "
          + program.workgroupSize() + " but device '" + device.info().name() + "' allows at most "
          + device.info().maxWorkgroupSizeX() + ".", "use a smaller workgroup size.");
    }
    long module = VK_NULL_HANDLE;
    long[] layouts = new long[0];
    long pipelineLayout = VK_NULL_HANDLE;
    ByteBuffer code = MemoryUtil.memAlloc(spirv.length).put(spirv).flip();
    try (MemoryStack stack = stackPush()) {
      LongBuffer pl = stack.mallocLong(1);
      Vk.check(vkCreateShaderModule(device.handle,
          VkShaderModuleCreateInfo.calloc(stack).sType$Default().pCode(code), null, pl), "vkCreateShaderModule");
      module = pl.get(0);

      int sets = program.buffers().stream().filter(d -> d.kind().isBound()).mapToInt(BufferDecl::set).max().orElse(-1) + 1;
      layouts = new long[sets];
      for (int s = 0; s < sets; s++) {
        final int set = s;
        List<BufferDecl> decls = program.buffers().stream().filter(d -> d.kind().isBound() && d.set() == set).toList();
        VkDescriptorSetLayoutBinding.Buffer b = VkDescriptorSetLayoutBinding.calloc(decls.size(), stack);
        for (int i = 0; i < decls.size(); i++) {
          b.get(i).binding(decls.get(i).binding()).descriptorType(descriptorType(decls.get(i)))
              .descriptorCount(1).stageFlags(VK_SHADER_STAGE_COMPUTE_BIT);
        }
        Vk.check(vkCreateDescriptorSetLayout(device.handle,
            VkDescriptorSetLayoutCreateInfo.calloc(stack).sType$Default().pBindings(b), null, pl),
            "vkCreateDescriptorSetLayout");
        layouts[s] = pl.get(0);
      }
      Vk.check(vkCreatePipelineLayout(device.handle,
          VkPipelineLayoutCreateInfo.calloc(stack).sType$Default().pSetLayouts(sets == 0 ? null : stack.longs(layouts)),
          null, pl), "vkCreatePipelineLayout");
      pipelineLayout = pl.get(0);

      VkSpecializationMapEntry.Buffer entries = VkSpecializationMapEntry.calloc(2, stack);
      entries.get(0).constantID(0).offset(0).size(4);
      entries.get(1).constantID(1).offset(4).size(4);
      VkSpecializationInfo spec = VkSpecializationInfo.calloc(stack).pMapEntries(entries)
          .pData(stack.malloc(8).putInt(0, program.workgroupSize()).putInt(4, rounding != null && rounding.fusedFma() ? 1 : 0));
      VkComputePipelineCreateInfo.Buffer ci = VkComputePipelineCreateInfo.calloc(1, stack).sType$Default()
          .layout(pipelineLayout);
      ci.stage().sType$Default().stage(VK_SHADER_STAGE_COMPUTE_BIT).module(module)
          .pName(stack.UTF8("main")).pSpecializationInfo(spec);
      Vk.check(vkCreateComputePipelines(device.handle, device.pipelineCache, ci, null, pl),
          "vkCreateComputePipelines('" + program.name() + "')");
      VulkanKernel k = new VulkanKernel(device, program, module, layouts, pipelineLayout, pl.get(0));
      device.counters.kernelsLive.incrementAndGet();
      device.adopt(k);
      device.registerKernel(k);
      return k;
    } catch (RuntimeException e) {
      destroyLayouts(device, module, layouts, pipelineLayout);
      throw e;
    } finally {
      MemoryUtil.memFree(code);
    }
  }

  static void destroyLayouts(VulkanDevice device, long module, long[] layouts, long pipelineLayout) {
    if (pipelineLayout != VK_NULL_HANDLE) {
      vkDestroyPipelineLayout(device.handle, pipelineLayout, null);
    }
    for (long l : layouts) {
      if (l != VK_NULL_HANDLE) {
        vkDestroyDescriptorSetLayout(device.handle, l, null);
      }
    }
    if (module != VK_NULL_HANDLE) {
      vkDestroyShaderModule(device.handle, module, null);
    }
  }

  static int descriptorType(BufferDecl d) {
    return d.kind().isParams() ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  }

  void ensureOpen(String what) {
    if (closed) {
      throw GpuException.of(Code.CLOSED, what + " with kernel '" + program.name() + "', which is closed.",
          "load the program again.");
    }
    device.ensureOpen(what);
  }

  VulkanDevice device() {
    return device;
  }

  @Override
  public Program program() {
    return program;
  }

  @Override
  public List<ByteBuffer> dispatch(List<ByteBuffer> inputs, Groups groups) {
    return dispatchTimed(inputs, groups).outputs();
  }

  @Override
  public TimedDispatch dispatchTimed(List<ByteBuffer> inputs, Groups groups) {
    long t0 = System.nanoTime();
    try (PrerecordedDispatch d = device.use("dispatching '" + program.name() + "'",
        () -> recordBorrowed(inputs, groups, true))) {
      long recorded = System.nanoTime();
      d.replay();
      long submitted = System.nanoTime();
      TimedDispatch t = d.await();
      List<ByteBuffer> outs = new ArrayList<>();
      for (int i = 0; i < d.outputs().size(); i++) {
        outs.add(d.readOutput(i));
      }
      long end = System.nanoTime();
      return new TimedDispatch(outs, end - t0, t.deviceNs(), submitted - t0, end - submitted);
    }
  }

  @Override
  public PrerecordedDispatch prerecord(List<GpuBuffer> inputs, List<GpuBuffer> outputs, GpuBuffer params, Groups groups) {
    return device.use("recording '" + program.name() + "'", () -> {
      ensureOpen("recording");
      return VulkanDispatch.record(device, List.of(new DispatchStep(this, inputs, outputs, params, groups)), List.of());
    });
  }

  @Override
  public PrerecordedDispatch prerecordBorrowed(List<ByteBuffer> inputs, Groups groups) {
    return device.use("recording '" + program.name() + "'", () -> recordBorrowed(inputs, groups, false));
  }

  /** Uploads inputs (parameters included, in declaration order) and allocates declared outputs. */
  private PrerecordedDispatch recordBorrowed(List<ByteBuffer> inputs, Groups groups, boolean oneCall) {
    ensureOpen("recording");
    List<BufferDecl> nonOutputs = program.buffers().stream()
        .filter(d -> !d.isOutput() && d.kind().isBound()).toList();
    if (inputs.size() != nonOutputs.size()) {
      throw GpuException.of(Code.BINDING, (oneCall ? "dispatch" : "borrowed recording") + " of '" + program.name()
          + "' received " + inputs.size() + " host inputs but the program declares " + nonOutputs.size()
          + " non-output buffers.", "pass one ByteBuffer per non-output BufferDecl, in declaration order.");
    }
    List<GpuBuffer> owned = new ArrayList<>();
    try {
      List<GpuBuffer> in = new ArrayList<>();
      GpuBuffer params = null;
      for (int i = 0; i < inputs.size(); i++) {
        BufferDecl d = nonOutputs.get(i);
        ByteBuffer src = inputs.get(i);
        GpuBuffer b = VulkanBuffer.create(device, src.remaining(), d.kind().isParams() ? BufferRole.PARAMS : BufferRole.INPUT);
        owned.add(b);
        writeHost(b, src);
        if (d.kind().isParams() && params == null) {
          params = b;
        } else {
          in.add(b);
        }
      }
      List<GpuBuffer> out = new ArrayList<>();
      for (BufferDecl d : program.outputs()) {
        if (d.count() == 0) {
          throw GpuException.of(Code.BINDING, "output `" + d.name() + "` of '" + program.name()
              + "' has no declared element count, so a one-call dispatch cannot size it.",
              "declare it with BufferDecl.output(name, binding, type, count), or record over your own buffers.");
        }
        GpuBuffer b = VulkanBuffer.create(device, d.declaredBytes(), BufferRole.OUTPUT);
        owned.add(b);
        out.add(b);
      }
      return VulkanDispatch.record(device, List.of(new DispatchStep(this, in, out, params, groups)), owned);
    } catch (RuntimeException e) {
      Closeables.closeAllAfter(e, owned);
      throw e;
    }
  }

  private static void writeHost(GpuBuffer b, ByteBuffer src) {
    if (src.isDirect()) {
      b.write(0, src);
    } else {
      try (MemoryStack stack = stackPush()) {
        ByteBuffer tmp = src.remaining() <= 32 * 1024 ? stack.malloc(src.remaining())
            : ByteBuffer.allocateDirect(src.remaining());
        tmp.put(src.duplicate()).flip();
        b.write(0, tmp);
      }
    }
  }

  @Override
  public CacheStats descriptorCacheStats() {
    return descriptors.stats();
  }

  @Override
  public boolean isClosed() {
    return closed;
  }

  @Override
  public int closeOrder() {
    return 2;
  }

  @Override
  public void close() {
    device.closeChild(this, () -> {
      closed = true;
      device.unregisterKernel(this);
      descriptors.close();
      vkDestroyPipeline(device.handle, pipeline, null);
      destroyLayouts(device, shaderModule, setLayouts, pipelineLayout);
      device.counters.kernelsLive.decrementAndGet();
    });
    closed = true;
  }

  @Override
  public String toString() {
    return "Kernel[" + program.name() + "]";
  }
}
