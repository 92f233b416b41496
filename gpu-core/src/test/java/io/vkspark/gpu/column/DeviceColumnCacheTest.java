package io.vkspark.gpu.column;

import static io.vkspark.gpu.column.KernelSignature.arg;
import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Cached columns read from their device copies on lavapipe (under the validation layer): results
 * equal the CPU's and the host copies', the first use writes the copy and later ones hit it, the
 * budget evicts the least recently used, and drop and close free every buffer.
 */
final class DeviceColumnCacheTest {
  @RegisterExtension
  static final ColumnGpu GPU = new ColumnGpu();

  /** A column of a "cached batch": values in an Arrow vector, identity given. */
  private record Cached(InputColumn in, long residentBatch, int residentColumn) implements ResidentColumn {
    @Override
    public SqlType type() {
      return in.type();
    }

    @Override
    public int rows() {
      return in.rows();
    }

    @Override
    public void copyValues(int start, int count, long dst) {
      in.copyValues(start, count, dst);
    }

    @Override
    public boolean hasNulls() {
      return in.hasNulls();
    }

    @Override
    public void andValidity(long dst, int rows) {
      in.andValidity(dst, rows);
    }
  }

  private static final ColumnKernel DOUBLES = ColumnKernel.compile(KernelSignature.of("dc_doubles", "double",
      arg("a", "double"), arg("b", "double")), "a * b + a", java.nio.file.Path.of("target", "shader-cache"));
  private static final ColumnKernel BOOLS = ColumnKernel.compile(KernelSignature.of("dc_bools", "boolean",
      arg("a", "boolean"), arg("b", "boolean")), "a != b", java.nio.file.Path.of("target", "shader-cache"));

  private Float8Vector doubles(int rows, long seed) {
    Random r = new Random(seed);
    Float8Vector v = new Float8Vector("d" + seed, GPU.allocator());
    v.allocateNew(rows);
    for (int i = 0; i < rows; i++) {
      if (r.nextInt(10) == 0) {
        v.setNull(i);
      } else {
        v.set(i, (r.nextDouble() - 0.5) * 1e3);
      }
    }
    v.setValueCount(rows);
    return v;
  }

  private BitVector bools(int rows, long seed) {
    Random r = new Random(seed);
    BitVector v = new BitVector("b" + seed, GPU.allocator());
    v.allocateNew(rows);
    for (int i = 0; i < rows; i++) {
      if (r.nextInt(10) == 0) {
        v.setNull(i);
      } else {
        v.set(i, r.nextBoolean() ? 1 : 0);
      }
    }
    v.setValueCount(rows);
    return v;
  }

  private static Object expected(ColumnKernel k, FieldVector a, FieldVector b, int row) {
    if (a.isNull(row) || b.isNull(row)) {
      return null;
    }
    if (k == DOUBLES) {
      double x = ((Float8Vector) a).get(row);
      return x * ((Float8Vector) b).get(row) + x;
    }
    return ((BitVector) a).get(row) != ((BitVector) b).get(row);
  }

  private static void assertResults(ColumnKernel k, List<FieldVector[]> batches, FieldVector out) {
    int row = 0;
    for (FieldVector[] batch : batches) {
      for (int i = 0; i < batch[0].getValueCount(); i++, row++) {
        Object want = expected(k, batch[0], batch[1], i);
        Object got = out.isNull(row) ? null : k == DOUBLES ? ((Float8Vector) out).get(row) : ((BitVector) out).get(row) == 1;
        assertEquals(want, got, "row " + row); // x * b + x bit for bit: NoContraction, no driver fuses it
      }
    }
    assertEquals(row, out.getValueCount());
  }

  /** Appends every batch (its two columns as cached columns of batch {@code id0 + b}) and checks the results. */
  private static void runAll(BatchRunner runner, ColumnKernel k, List<FieldVector[]> batches, long id0) {
    SqlType t = k == DOUBLES ? SqlType.DOUBLE : SqlType.BOOLEAN;
    for (int b = 0; b < batches.size(); b++) {
      FieldVector[] v = batches.get(b);
      int rows = v[0].getValueCount();
      runner.append(List.of(new Cached(ArrowInputs.of(v[0], t), id0 + b, 0), new Cached(ArrowInputs.of(v[1], t), id0 + b, 1)),
          rows);
    }
    assertResults(k, batches, runner.results().get(0));
  }

  private BatchRunner runner(ColumnKernel k, DeviceColumnCache cache) {
    SqlType t = k == DOUBLES ? SqlType.DOUBLE : SqlType.BOOLEAN;
    BatchRunner r = GPU.runtime().runner(List.of(new KernelCall(k, new int[] {0, 1})), List.of(t, t), 4096, GPU.allocator());
    r.readResident(cache);
    return r;
  }

  private static void closeAll(List<FieldVector[]> batches) {
    batches.forEach(b -> List.of(b).forEach(FieldVector::close));
  }

  @Test
  void readResident_firstUseUploads_laterUsesHit_andNothingComesFromTheHost() {
    List<FieldVector[]> batches = new ArrayList<>();
    for (int b = 0; b < 3; b++) { // appended behind each other: device copies land at rows 0, 1000, 2000
      batches.add(new FieldVector[] {doubles(1000 - b, 10 + b), doubles(1000 - b, 20 + b)});
    }
    try (DeviceColumnCache cache = new DeviceColumnCache(GPU.device(), 1 << 20);
         BatchRunner runner = runner(DOUBLES, cache)) {
      runAll(runner, DOUBLES, batches, 100);
      assertEquals(6, runner.residentUploads());
      assertEquals(0, runner.residentHits());
      long uploaded = runner.stats().bytesUploaded();
      assertEquals(0, uploaded, "the first use writes the device copies, not the input buffer");
      runAll(runner, DOUBLES, batches, 100);
      assertEquals(6, runner.residentHits());
      assertEquals(0, runner.stats().bytesUploaded(), "no host copy");
      assertTrue(runner.residentCopyNs() > 0, "the device copies are timed");
      DeviceColumnCache.Stats s = cache.stats();
      assertEquals(6, s.columns());
      assertEquals(8L * (1000 + 999 + 998) * 2, s.residentBytes());
      assertEquals(0, s.evictions());

      runner.readResident(null); // from the host again: same rows
      runAll(runner, DOUBLES, batches, 100);
      assertTrue(runner.stats().bytesUploaded() > 0);
    } finally {
      closeAll(batches);
    }
  }

  @Test
  void booleans_moveWholeWordsOnTheDevice_andTheRestFromTheHost() {
    List<FieldVector[]> batches = new ArrayList<>();
    batches.add(new FieldVector[] {bools(130, 1), bools(130, 2)}); // 128 rows on the device, 2 from the host
    batches.add(new FieldVector[] {bools(200, 3), bools(200, 4)}); // lands at row 130: from the host
    batches.add(new FieldVector[] {bools(100, 5), bools(100, 6)}); // row 330: from the host
    try (DeviceColumnCache cache = new DeviceColumnCache(GPU.device(), 1 << 20);
         BatchRunner runner = runner(BOOLS, cache)) {
      runAll(runner, BOOLS, batches, 200);
      runAll(runner, BOOLS, batches, 200);
      assertEquals(2, runner.residentUploads());
      assertEquals(2, runner.residentHits());
      for (FieldVector[] b : batches) { // each batch on its own, from row 0: whole words of every batch on the device
        runAll(runner, BOOLS, List.<FieldVector[]>of(b), 200 + batches.indexOf(b));
      }
      assertEquals(6, runner.residentUploads(), "the second and third batches' copies (their first use at row 0)");
      assertEquals(4, runner.residentHits());
    } finally {
      closeAll(batches);
    }
  }

  @Test
  void overBudget_evictsTheLeastRecentlyUsed_andDropAndCloseFreeEverything() {
    List<FieldVector[]> batches = new ArrayList<>();
    for (int b = 0; b < 4; b++) {
      batches.add(new FieldVector[] {doubles(512, 30 + b), doubles(512, 40 + b)});
    }
    long column = 8L * 512;
    DeviceColumnCache cache = new DeviceColumnCache(GPU.device(), 3 * column); // one batch and a half
    try (BatchRunner runner = runner(DOUBLES, null)) {
      runAll(runner, DOUBLES, List.<FieldVector[]>of(batches.get(0)), 299); // the runner now holds its buffer set
      long buffersBefore = GPU.device().counters().buffersLive();
      runner.readResident(cache);
      for (int round = 0; round < 2; round++) {
        for (int b = 0; b < batches.size(); b++) {
          runAll(runner, DOUBLES, List.<FieldVector[]>of(batches.get(b)), 300 + b);
          assertTrue(cache.stats().residentBytes() <= 3 * column, cache.stats().toString());
        }
      }
      DeviceColumnCache.Stats s = cache.stats();
      assertEquals(16, s.uploads(), "each column was evicted before its next use: " + s);
      assertEquals(13, s.evictions(), s.toString());
      assertEquals(0, s.hits(), s.toString());
      assertEquals(3, s.columns());
      assertEquals(buffersBefore + 3, GPU.device().counters().buffersLive(), "one device buffer per column held");

      cache.drop(303); // the last batch's two columns
      assertEquals(1, cache.stats().columns());
      assertEquals(column, cache.stats().residentBytes());
      assertEquals(buffersBefore + 1, GPU.device().counters().buffersLive());
      runAll(runner, DOUBLES, List.<FieldVector[]>of(batches.get(3)), 303); // written again after its drop
      assertEquals(18, cache.stats().uploads(), cache.stats().toString());

      cache.close();
      assertEquals(0, cache.stats().residentBytes());
      assertEquals(0, cache.stats().columns());
      assertEquals(buffersBefore, GPU.device().counters().buffersLive(), "every copy freed");
      runAll(runner, DOUBLES, List.<FieldVector[]>of(batches.get(3)), 303); // a closed cache: from the host
      assertEquals(18, cache.stats().uploads());
    } finally {
      cache.close();
      closeAll(batches);
    }
  }
}
