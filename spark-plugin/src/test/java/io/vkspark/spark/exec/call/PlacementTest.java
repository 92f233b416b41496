package io.vkspark.spark.exec.call;

import io.vkspark.spark.plan.CallSites;
import io.vkspark.spark.exec.call.Placement;
import io.vkspark.spark.conf.VkConf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.spark.exec.call.Placement.Cause;
import io.vkspark.spark.exec.call.Placement.DecidedBy;
import io.vkspark.spark.conf.Settings;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The one placement type: each cause worded once, and every rendering built from that wording. */
final class PlacementTest {
  /** Details for each cause's {@code %s}s: a cause whose text names more or fewer fails here. */
  private static final Map<Cause, Object[]> DETAILS = Map.ofEntries(
      Map.entry(Cause.NO_DEVICE_WHEN_PLANNING, new Object[] {"no Vulkan device matches 'x'."}),
      Map.entry(Cause.NO_PLUGIN, new Object[] {}),
      Map.entry(Cause.NO_DEVICE_ON_EXECUTOR, new Object[] {"7", "not opened"}),
      Map.entry(Cause.FEATURE_MISSING, new Object[] {"program 'f' needs shaderFloat64 (double)"}),
      Map.entry(Cause.RESULT_TYPE_DIFFERS, new Object[] {"float", "double"}),
      Map.entry(Cause.ARGUMENT_TYPE_DIFFERS, new Object[] {1, "x", "int", "double"}),
      Map.entry(Cause.LAMBDA, new Object[] {}),
      Map.entry(Cause.CONDITIONAL, new Object[] {}),
      Map.entry(Cause.UNPLANNED_OPERATOR, new Object[] {"Sort"}),
      Map.entry(Cause.DISABLED, new Object[] {}),
      Map.entry(Cause.NOT_TRANSLATED, new Object[] {"com.acme.F.call line 3: new java.lang.StringBuilder (allocation)"}),
      Map.entry(Cause.LOOP_LIMIT, new Object[] {"cut short"}),
      Map.entry(Cause.ADAPTIVE_TRIAL, new Object[] {"2048 rows"}),
      Map.entry(Cause.ADAPTIVE_CHOICE, new Object[] {"CPU 0.3 us/row"}),
      Map.entry(Cause.NULL_ARGUMENTS, new Object[] {}),
      Map.entry(Cause.WIDE_ROW, new Object[] {140000001L, "slen", 134217728L}),
      Map.entry(Cause.RECOMPUTE, new Object[] {"row 7 threw"}),
      Map.entry(Cause.GPU_FAILURE, new Object[] {"decimal overflow"}),
      Map.entry(Cause.HANDED_BACK, new Object[] {"3 rows not ASCII"}),
      Map.entry(Cause.KEYS_TOO_WIDE, new Object[] {64}));

  private static final VkConf STRICT = VkConf.from(k -> k.equals(Settings.FALLBACK.key()) ? "false" : null);
  private static final VkConf LENIENT = VkConf.from(k -> null);

  @Test
  void everyCause_rendersItsDetails_inExplainLogsAndErrors() {
    assertEquals(Cause.values().length, DETAILS.size());
    for (Cause c : Cause.values()) {
      Placement p = Placement.cpu(c, DecidedBy.PLANNER, DETAILS.get(c));
      String reason = p.reason();
      assertFalse(reason.isBlank() || reason.contains("%"), c + ": " + reason);
      for (Object d : DETAILS.get(c)) {
        assertTrue(reason.contains(String.valueOf(d).replaceFirst("\\.$", "")), c + ": " + reason);
      }
      assertEquals("on CPU because " + reason, p.render());
      assertEquals("f runs on CPU because " + reason, p.describe("f"));
      GpuException e = p.error("f");
      assertEquals(Code.UNSUPPORTED, e.code());
      assertEquals("vkspark: GPU UDF 'f' cannot run on the GPU because " + reason + ".", e.what());
      assertTrue(e.fix().endsWith(", or set spark.vkspark.fallback=true to run it on the CPU."), e.fix());
    }
  }

  @Test
  void knownWordings() {
    assertEquals("it is inside Sort, which vkspark does not plan on the GPU",
        Placement.cpu(Cause.UNPLANNED_OPERATOR, DecidedBy.LEFTOVERS, "Sort").reason());
    assertEquals("it is registered as returning float but its kernel returns double",
        Placement.cpu(Cause.RESULT_TYPE_DIFFERS, DecidedBy.PLANNER, "float", "double").reason());
    assertEquals("executor 7 has no Vulkan device (not opened)",
        Placement.cpu(Cause.NO_DEVICE_ON_EXECUTOR, DecidedBy.EXECUTOR, "7", "not opened").reason());
    assertTrue(CallSites.placement(CallSites.Site.LAMBDA).reason().startsWith("it is inside a lambda function"));
    assertTrue(CallSites.placement(CallSites.Site.CONDITIONAL).reason().startsWith("it sits in a branch of CASE"));
  }

  @Test
  void aDeviceError_isQuotedByItsWhat_neverItsFix() {
    GpuException open = GpuException.of(Code.NO_DEVICE, "no Vulkan device matches 'x'", "list the devices.");
    Placement p = Placement.cpu(Cause.NO_DEVICE_WHEN_PLANNING, DecidedBy.PLANNER, open);
    assertEquals("no Vulkan device could be opened (no Vulkan device matches 'x')", p.reason());
  }

  @Test
  void onGpu_hasNoCause_andOnCpu_needsOne() {
    Placement gpu = Placement.gpu(DecidedBy.PLANNER);
    assertTrue(gpu.onGpu());
    assertEquals("on GPU", gpu.render());
    assertEquals("f runs on GPU", gpu.describe("f"));
    assertThrows(IllegalArgumentException.class,
        () -> new Placement(Placement.Where.GPU, Cause.LAMBDA, List.of(), DecidedBy.PLANNER));
    assertThrows(IllegalArgumentException.class,
        () -> new Placement(Placement.Where.CPU, null, List.of(), DecidedBy.PLANNER));
  }

  @Test
  void strict_throwsOnlyForCpuWithFallbackOff_andNeverForDisabled() {
    Placement cpu = Placement.cpu(Cause.UNPLANNED_OPERATOR, DecidedBy.LEFTOVERS, "Sort");
    assertSame(cpu, cpu.strict(LENIENT, "f"));
    GpuException e = assertThrows(GpuException.class, () -> cpu.strict(STRICT, "f"));
    assertTrue(e.fix().startsWith("compute it in a SELECT or WHERE first"), e.fix());
    Placement gpu = Placement.gpu(DecidedBy.EXECUTOR);
    assertSame(gpu, gpu.strict(STRICT, "f"));
    Placement disabled = Placement.cpu(Cause.DISABLED, DecidedBy.LEFTOVERS);
    assertSame(disabled, disabled.strict(STRICT, "f"));
  }

  @Test
  void leftToSpark_isTheCallsSparksOperatorKeeps() {
    assertTrue(Placement.cpu(Cause.RESULT_TYPE_DIFFERS, DecidedBy.PLANNER, "a", "b").leftToSpark());
    assertTrue(CallSites.placement(CallSites.Site.LAMBDA).leftToSpark());
    assertFalse(Placement.cpu(Cause.NO_PLUGIN, DecidedBy.PLANNER).leftToSpark());
    assertFalse(Placement.cpu(Cause.FEATURE_MISSING, DecidedBy.EXECUTOR, "x").leftToSpark());
    assertFalse(Placement.gpu(DecidedBy.PLANNER).leftToSpark());
  }
}
