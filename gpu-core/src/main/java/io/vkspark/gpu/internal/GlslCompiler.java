package io.vkspark.gpu.internal;

import static org.lwjgl.util.shaderc.Shaderc.*;

import io.vkspark.gpu.CompileResult;
import io.vkspark.gpu.GpuException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.lwjgl.Version;
import org.lwjgl.system.MemoryStack;
import org.lwjgl.system.MemoryUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * GLSL compute shaders to SPIR-V with shaderc (Vulkan 1.2 target, optimized), cached on disk by a
 * SHA-256 key over the compiler, its settings and the source, so an executor compiles each kernel
 * once per machine rather than once per process (shaderc takes ~0.3 s per small shader).
 *
 * <p>The cache verifies what it reads: each file carries a header (magic, format version, the key,
 * the length and SHA-256 of the SPIR-V) and every read is checked against it, parsed, and passed
 * to the caller's seal check before anything else sees it. A file that fails any check (truncated,
 * garbage, another kernel's module copied under this key) is logged, recompiled and replaced
 * atomically.
 *
 * <p>Needs no device: user kernels are checked when they are registered, before any executor
 * runs them. Thread-safe.
 */
public final class GlslCompiler {
  private static final Logger LOG = LoggerFactory.getLogger(GlslCompiler.class);
  private static final Pattern LINE = Pattern.compile("^[^:\\n]*:(\\d+): error: (.*)$", Pattern.MULTILINE);
  private static final Pattern ANY_ERROR = Pattern.compile("^(?:[^:\\n]*: )?error: (.*)$", Pattern.MULTILINE);
  private static final String SETTINGS = "vulkan1.2/spv1.5/v2";
  /** First bytes of a cache file. */
  private static final byte[] FILE_MAGIC = "VKSPIRV\0".getBytes(StandardCharsets.US_ASCII);
  private static final int FILE_VERSION = 1;
  private static final int HEADER_BYTES = FILE_MAGIC.length + 4 + 32 + 4 + 32;
  private static final Object LOCK = new Object();
  private static long compiler;
  private static final Map<Flavor, Long> OPTIONS = new EnumMap<>(Flavor.class);
  private static volatile String identity;

  /** How a module is compiled: for running, or for reading back (no optimization, debug info). */
  public enum Flavor {
    /** Optimized for performance; what devices run. */
    OPTIMIZED("O"),
    /** Unoptimized with OpName/OpLine, for analysing what a body does; never run. */
    DEBUG("O0g");

    private final String tag;

    Flavor(String tag) {
      this.tag = tag;
    }
  }

  private GlslCompiler() {}

  /**
   * Compiles {@code source} optimized; looks in and fills {@code cacheDir}/spirv when it is not null.
   *
   * @param name file name for messages, e.g. {@code saxpy.comp}
   */
  public static CompileResult compile(String name, String source, Path cacheDir) {
    return compile(name, source, cacheDir, Flavor.OPTIMIZED, spirv -> { });
  }

  /**
   * Compiles {@code source}, or reads it from the cache. {@code seal} sees every module before it
   * is returned or stored, fresh or cached; on a cached module a failing seal means recompiling,
   * on a fresh one its exception propagates (and nothing is stored).
   */
  public static CompileResult compile(String name, String source, Path cacheDir, Flavor flavor, Consumer<byte[]> seal) {
    String key = key(source, flavor);
    Path cached = cacheDir == null ? null : cacheDir.resolve("spirv").resolve(key + ".vkspv");
    if (cached != null && Files.isRegularFile(cached)) {
      try {
        byte[] spirv = readEntry(cached, key);
        SpirvModule.parse("cached SPIR-V " + cached.getFileName(), spirv);
        seal.accept(spirv);
        return new CompileResult(Optional.of(spirv), List.of(), "", true);
      } catch (IOException | GpuException e) {
        LOG.warn("SPIR-V cache entry {} is not valid, recompiling it: {}", cached, e.getMessage());
      }
    }
    CompileResult result = compileNow(name, source, flavor);
    if (result.ok()) {
      seal.accept(result.spirv().get());
      if (cached != null) {
        store(cached, key, result.spirv().get());
      }
    }
    return result;
  }

  /** Compiles or throws a COMPILE {@link GpuException} carrying shaderc's messages. */
  public static byte[] compileOrThrow(String name, String source, Path cacheDir) {
    return compileOrThrow(name, source, cacheDir, spirv -> { });
  }

  /** Compiles (checking every module with {@code seal}) or throws a COMPILE {@link GpuException}. */
  public static byte[] compileOrThrow(String name, String source, Path cacheDir, Consumer<byte[]> seal) {
    CompileResult r = compile(name, source, cacheDir, Flavor.OPTIMIZED, seal);
    if (!r.ok()) {
      throw GpuException.of(GpuException.Code.COMPILE,
          "GLSL program '" + name.replaceFirst("\\.comp$", "") + "' does not compile: " + r.log().strip(),
          "correct the shader at the line shaderc names.");
    }
    return r.spirv().get();
  }

  /**
   * The cache key of {@code source}: SHA-256 (hex) over the compiler's identity (LWJGL and
   * shaderc versions, target settings), the flavor and the whole source.
   */
  public static String key(String source, Flavor flavor) {
    return hash(compilerIdentity() + "\n" + flavor.tag + "\n" + source);
  }

  /** LWJGL version, shaderc's SPIR-V version and the target settings. */
  static String compilerIdentity() {
    String id = identity;
    if (id == null) {
      try (MemoryStack stack = MemoryStack.stackPush()) {
        IntBuffer version = stack.mallocInt(1);
        IntBuffer revision = stack.mallocInt(1);
        shaderc_get_spv_version(version, revision);
        id = "lwjgl " + Version.getVersion() + "; shaderc spv " + Integer.toHexString(version.get(0)) + "."
            + revision.get(0) + "; " + SETTINGS;
      }
      identity = id;
    }
    return id;
  }

  private static byte[] readEntry(Path file, String key) throws IOException {
    byte[] bytes = Files.readAllBytes(file);
    if (bytes.length < HEADER_BYTES) {
      throw new IOException(bytes.length + " bytes, shorter than the " + HEADER_BYTES + "-byte header");
    }
    ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    byte[] magic = new byte[FILE_MAGIC.length];
    b.get(magic);
    if (!Arrays.equals(magic, FILE_MAGIC)) {
      throw new IOException("not a vkspark SPIR-V cache file (bad magic)");
    }
    int version = b.getInt();
    if (version != FILE_VERSION) {
      throw new IOException("cache format " + version + ", expected " + FILE_VERSION);
    }
    byte[] storedKey = new byte[32];
    b.get(storedKey);
    if (!HexFormat.of().formatHex(storedKey).equals(key)) {
      throw new IOException("it holds the module of key " + HexFormat.of().formatHex(storedKey) + ", not " + key);
    }
    int length = b.getInt();
    if (length != bytes.length - HEADER_BYTES) {
      throw new IOException("header says " + length + " bytes of SPIR-V, the file has " + (bytes.length - HEADER_BYTES));
    }
    byte[] digest = new byte[32];
    b.get(digest);
    byte[] spirv = Arrays.copyOfRange(bytes, HEADER_BYTES, bytes.length);
    if (!MessageDigest.isEqual(digest, sha256(spirv))) {
      throw new IOException("SPIR-V digest does not match its header (corrupt file)");
    }
    return spirv;
  }

  /**
   * Bytes of native stack for the compiler thread. glslang and spirv-opt recurse once per nesting
   * level of an expression (a chain {@code a + b + ...} included), about 5 KiB each: a body of 1,500
   * additions overflowed an 8 MiB thread stack and killed the JVM with SIGSEGV (no Java error can
   * catch that). {@link #MAX_SOURCE_CHARS} bounds the depth; this stack covers it with room.
   */
  private static final long COMPILER_STACK_BYTES = 1L << 30;
  /** Longest source compiled: with {@link #COMPILER_STACK_BYTES}, every expression fits the stack. */
  public static final int MAX_SOURCE_CHARS = 256 * 1024;
  /**
   * Most compiles on compiler threads at once, abandoned ones included. shaderc cannot be stopped: a
   * caller whose budget ran out or that was interrupted returns, but its compile runs on to the
   * end and keeps its place here, so a burst of slow definitions cannot pile up compiler threads
   * (each with {@link #COMPILER_STACK_BYTES} of stack); a compile that finds every place taken
   * waits for one within its own budget, then fails saying so.
   */
  public static final int MAX_IN_FLIGHT = 2;
  private static final Semaphore IN_FLIGHT = new Semaphore(MAX_IN_FLIGHT);
  /** Daemon threads (shutdown never waits for shaderc), ended after 10 s idle: a deep expression's stack pages go back. */
  private static final ThreadPoolExecutor COMPILER_THREADS = new ThreadPoolExecutor(
      MAX_IN_FLIGHT, MAX_IN_FLIGHT, 10, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
      r -> {
        Thread t = new Thread(null, r, "vkspark-shaderc", COMPILER_STACK_BYTES);
        t.setDaemon(true);
        return t;
      });
  /** The deadline ({@link System#nanoTime}) of this thread's compiles, set by {@link #withBudget}; absent: none. */
  private static final ThreadLocal<Long> DEADLINE = new ThreadLocal<>();

  static {
    COMPILER_THREADS.allowCoreThreadTimeOut(true);
  }

  /**
   * Runs {@code work} with every compile it makes on this thread sharing one time budget from now
   * (all the compiles of one definition together; zero or negative: no budget). A nested budget
   * cannot extend an outer one. Past the budget a compile fails with TIMEOUT.
   */
  public static <T> T withBudget(Duration budget, Supplier<T> work) {
    Long outer = DEADLINE.get();
    if (budget.isZero() || budget.isNegative()) {
      return work.get();
    }
    long now = System.nanoTime();
    long nanos = budget.compareTo(Duration.ofDays(365)) > 0 ? Duration.ofDays(365).toNanos() : budget.toNanos();
    long deadline = outer != null && outer - now < nanos ? outer : now + nanos;
    DEADLINE.set(deadline);
    try {
      return work.get();
    } finally {
      if (outer == null) {
        DEADLINE.remove();
      } else {
        DEADLINE.set(outer);
      }
    }
  }

  /** Compiles running or queued now, abandoned ones included (at most {@link #MAX_IN_FLIGHT}). */
  public static int compilesInFlight() {
    return MAX_IN_FLIGHT - IN_FLIGHT.availablePermits();
  }

  /** Compiler threads alive now (at most {@link #MAX_IN_FLIGHT}). */
  public static int compilerThreads() {
    return COMPILER_THREADS.getPoolSize();
  }

  /**
   * Compiles on a compiler thread, whose stack is large enough for any source we accept, and waits
   * for it within this thread's budget ({@link #withBudget}), interruptibly: an interrupted caller
   * (a cancelled statement or task) gets CANCELLED at once, with its interrupt flag kept.
   */
  private static CompileResult compileNow(String name, String source, Flavor flavor) {
    if (source.length() > MAX_SOURCE_CHARS) {
      throw GpuException.of(GpuException.Code.COMPILE, "shader '" + name + "' has " + source.length()
          + " characters, more than vkspark compiles (" + MAX_SOURCE_CHARS + ").", "shorten it.");
    }
    Long deadline = DEADLINE.get();
    long t0 = System.nanoTime();
    try {
      boolean placed = deadline == null ? acquire() : IN_FLIGHT.tryAcquire(Math.max(0, deadline - t0),
          TimeUnit.NANOSECONDS);
      if (!placed) {
        throw GpuException.of(GpuException.Code.TIMEOUT, "shader '" + name + "' was not compiled: all " + MAX_IN_FLIGHT
            + " shader compiler threads stayed busy for its whole compile budget, with compiles that may have run past "
            + "their own budget (shaderc cannot be stopped; they end by themselves).", "retry later, and shorten or "
            + "simplify the definitions that compile slowly; spark.vkspark.compileTimeout sets the budget.");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw cancelled(name, e);
    }
    AtomicBoolean abandoned = new AtomicBoolean();
    Future<CompileResult> f;
    try {
      f = COMPILER_THREADS.submit(() -> {
        try {
          return abandoned.get() ? null : compileHere(name, source, flavor);
        } finally {
          IN_FLIGHT.release();
        }
      });
    } catch (RuntimeException e) {
      IN_FLIGHT.release();
      throw e;
    }
    try {
      return deadline == null ? f.get() : f.get(Math.max(0, deadline - System.nanoTime()),
          TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      abandoned.set(true);
      Thread.currentThread().interrupt();
      throw cancelled(name, e);
    } catch (TimeoutException e) {
      abandoned.set(true);
      long ms = (System.nanoTime() - t0) / 1_000_000;
      LOG.warn("shader {} did not compile within its budget ({} ms); shaderc runs on in the background", name, ms);
      throw new GpuException(GpuException.Code.TIMEOUT, "shader '" + name + "' did not compile within its budget ("
          + ms + " ms so far; shaderc finishes it in the background, holding one of " + MAX_IN_FLIGHT
          + " compiler threads). Fix: shorten or simplify the definition (long expression chains and deep nesting "
          + "compile slowly), or raise spark.vkspark.compileTimeout.", e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      if (e.getCause() instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException(e.getCause());
    }
  }

  private static boolean acquire() throws InterruptedException {
    IN_FLIGHT.acquire();
    return true;
  }

  private static GpuException cancelled(String name, InterruptedException e) {
    return new GpuException(GpuException.Code.CANCELLED, "compiling shader '" + name + "' was cancelled: the waiting "
        + "thread was interrupted (a cancelled statement or task). Fix: nothing to do if it was cancelled on purpose; "
        + "otherwise run the statement again.", e);
  }

  /**
   * One compile. shaderc's compiler and options are const in {@code shaderc_compile_into_spv}, so
   * compiles run concurrently; only their creation is locked.
   */
  private static CompileResult compileHere(String name, String source, Flavor flavor) {
    long shaderc;
    long options;
    synchronized (LOCK) {
      if (compiler == 0) {
        compiler = shaderc_compiler_initialize();
        if (compiler == 0) {
          throw GpuException.of(GpuException.Code.COMPILE, "shaderc could not be initialized.",
              "check that lwjgl-shaderc's natives for this platform are on the classpath.");
        }
      }
      shaderc = compiler;
      options = OPTIONS.computeIfAbsent(flavor, GlslCompiler::newOptions);
    }
    long t0 = System.nanoTime();
    // on the heap, not LWJGL's thread stack (64 KiB): a long body would be an OutOfMemoryError there
    ByteBuffer src = MemoryUtil.memUTF8(source, false);
    ByteBuffer file = MemoryUtil.memUTF8(name);
    ByteBuffer entry = MemoryUtil.memUTF8("main");
    long result;
    try {
      result = shaderc_compile_into_spv(shaderc, src, shaderc_glsl_compute_shader, file, entry, options);
    } finally {
      MemoryUtil.memFree(src);
      MemoryUtil.memFree(file);
      MemoryUtil.memFree(entry);
    }
    if (result == 0) {
      throw GpuException.of(GpuException.Code.COMPILE, "shaderc returned no result for '" + name + "'.",
          "retry; if it persists, report it with the shader source.");
    }
    try {
      int status = shaderc_result_get_compilation_status(result);
      String log = String.valueOf(shaderc_result_get_error_message(result));
      if (status != shaderc_compilation_status_success) {
        return new CompileResult(Optional.empty(), diagnostics(log), log, false);
      }
      ByteBuffer bytes = shaderc_result_get_bytes(result);
      byte[] spirv = new byte[bytes.remaining()];
      bytes.get(spirv);
      LOG.debug("compiled {} ({}) in {} ms", name, flavor, (System.nanoTime() - t0) / 1_000_000);
      return new CompileResult(Optional.of(spirv), List.of(), log, false);
    } finally {
      shaderc_result_release(result);
    }
  }

  private static long newOptions(Flavor flavor) {
    long options = shaderc_compile_options_initialize();
    if (options == 0) {
      throw GpuException.of(GpuException.Code.COMPILE, "shaderc options could not be initialized.",
          "check that lwjgl-shaderc's natives for this platform are on the classpath.");
    }
    shaderc_compile_options_set_target_env(options, shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_2);
    shaderc_compile_options_set_target_spirv(options, shaderc_spirv_version_1_5);
    if (flavor == Flavor.OPTIMIZED) {
      shaderc_compile_options_set_optimization_level(options, shaderc_optimization_level_performance);
    } else {
      shaderc_compile_options_set_optimization_level(options, shaderc_optimization_level_zero);
      shaderc_compile_options_set_generate_debug_info(options);
    }
    return options;
  }

  static List<CompileResult.Diagnostic> diagnostics(String log) {
    List<CompileResult.Diagnostic> out = new ArrayList<>();
    Matcher m = LINE.matcher(log);
    while (m.find()) {
      out.add(new CompileResult.Diagnostic(Integer.parseInt(m.group(1)), m.group(2).strip()));
    }
    if (out.isEmpty()) {
      Matcher any = ANY_ERROR.matcher(log);
      while (any.find()) {
        out.add(new CompileResult.Diagnostic(0, any.group(1).strip()));
      }
    }
    if (out.isEmpty() && !log.isBlank()) {
      out.add(new CompileResult.Diagnostic(0, log.strip()));
    }
    return out;
  }

  private static void store(Path file, String key, byte[] spirv) {
    ByteBuffer b = ByteBuffer.allocate(HEADER_BYTES + spirv.length).order(ByteOrder.LITTLE_ENDIAN);
    b.put(FILE_MAGIC).putInt(FILE_VERSION).put(HexFormat.of().parseHex(key)).putInt(spirv.length)
        .put(sha256(spirv)).put(spirv);
    try {
      Files.createDirectories(file.getParent());
      Path tmp = Files.createTempFile(file.getParent(), "spv", ".tmp");
      try {
        Files.write(tmp, b.array());
        try {
          Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
          Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
        }
      } finally {
        Files.deleteIfExists(tmp);
      }
    } catch (IOException e) {
      LOG.warn("could not write the SPIR-V cache entry {}: {}", file, e.toString());
    }
  }

  static String hash(String text) {
    return HexFormat.of().formatHex(sha256(text.getBytes(StandardCharsets.UTF_8)));
  }

  private static byte[] sha256(byte[] bytes) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(bytes);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
