package io.vkspark.gpu;

import static io.vkspark.gpu.TestGpu.assertGpuError;
import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Dispatch, timed dispatch and replay, on both transfer paths (direct and staged). */
final class PrerecordedDispatchTest {
  private static final int WG = 64;

  @ParameterizedTest
  @EnumSource(TransferMode.class)
  void oneCallDispatch_matchesCpuAndReportsTimings(TransferMode mode) {
    GpuDevice d = TestGpu.open(mode);
    int n = 1000;
    Program p = Program.glsl("saxpy", TestGpu.SAXPY).workgroupSize(WG)
        .buffer(BufferDecl.input("x", 0, ElementType.FLOAT32))
        .buffer(BufferDecl.output("y", 1, ElementType.FLOAT32, n)).build();
    try (Kernel k = d.load(p)) {
      ByteBuffer x = TestGpu.floats(n, i -> i * 0.25 - 7);
      TimedDispatch t = k.dispatchTimed(List.of(x), Groups.covering(n, WG, d.info().maxWorkgroupCountX()));
      ByteBuffer y = t.outputs().get(0).order(ByteOrder.LITTLE_ENDIAN);
      assertEquals(4 * n, y.remaining());
      for (int i = 0; i < n; i++) {
        assertEquals(2.5f * (i * 0.25f - 7) + 1f, y.getFloat(4 * i), "row " + i);
      }
      assertTrue(t.wallNs() > 0 && t.enqueueNs() > 0 && t.waitNs() > 0, t.toString());
      assertTrue(t.wallNs() >= t.enqueueNs() + t.waitNs() - 1_000_000, t.toString());
      assertNotNull(t.deviceNs(), "lavapipe has timestamps");
      assertTrue(t.deviceNs() > 0 && t.deviceNs() < t.wallNs(), t.toString());
    } finally {
      TestGpu.closeClean(d);
    }
  }

  @ParameterizedTest
  @EnumSource(TransferMode.class)
  void oneRecording_replays1000TimesWithFreshInputs(TransferMode mode) {
    GpuDevice d = TestGpu.open(mode);
    int n = 4099;
    Random random = new Random(42);
    try (Kernel k = d.load(TestGpu.saxpy(WG));
         GpuBuffer x = d.createBuffer(4L * n, BufferRole.INPUT);
         GpuBuffer y = d.createBuffer(4L * n, BufferRole.OUTPUT);
         PrerecordedDispatch rec = k.prerecord(List.of(x), List.of(y), null, Groups.covering(n, WG, 65535))) {
      assertEquals(mode == TransferMode.STAGED, x.isStaged());
      assertEquals(mode == TransferMode.STAGED, y.isStaged());
      ByteBuffer host = ByteBuffer.allocateDirect(4 * n).order(ByteOrder.LITTLE_ENDIAN);
      ByteBuffer out = ByteBuffer.allocateDirect(4 * n).order(ByteOrder.LITTLE_ENDIAN);
      long outAddress = org.lwjgl.system.MemoryUtil.memAddress(out);
      long commandBuffers = d.counters().commandBuffersCreated();
      for (int replay = 0; replay < 1000; replay++) {
        for (int i = 0; i < n; i++) {
          host.putFloat(4 * i, random.nextFloat() * 1000 - 500);
        }
        x.write(0, host);
        rec.run();
        rec.readOutputInto(0, out);
        assertEquals(outAddress, org.lwjgl.system.MemoryUtil.memAddress(out), "caller storage reused");
        for (int i = 0; i < n; i++) {
          float xi = host.getFloat(4 * i);
          float expected = 2.5f * xi + 1f;
          // One rounding of the product may differ: GPUs may fuse the multiply-add (NVIDIA does).
          if (Math.abs(out.getFloat(4 * i) - expected) > Math.ulp(Math.abs(2.5f * xi) + 1f)) {
            fail("replay " + replay + ", row " + i + ": " + out.getFloat(4 * i) + " != " + expected);
          }
        }
      }
      assertEquals(1000, rec.replays());
      assertEquals(commandBuffers, d.counters().commandBuffersCreated(), "replays record nothing new");
    } finally {
      TestGpu.closeClean(d);
    }
  }

  @ParameterizedTest
  @EnumSource(TransferMode.class)
  void indirectDispatch_differentRowCountPerReplay_clearsTheRest(TransferMode mode) {
    GpuDevice d = TestGpu.open(mode);
    int capacity = 70_000; // > 65,535 groups of 1 would need y; here 1,094 groups of 64
    Random random = new Random(7);
    try (Kernel k = d.load(TestGpu.saxpyRows(WG));
         GpuBuffer params = d.createBuffer(32, BufferRole.PARAMS);
         GpuBuffer x = d.createBuffer(4L * capacity, BufferRole.INPUT);
         GpuBuffer y = d.createBuffer(4L * capacity, BufferRole.OUTPUT);
         PrerecordedDispatch rec = k.prerecord(List.of(x), List.of(y), params, Groups.of(0))) {
      x.write(0, TestGpu.floats(capacity, i -> i));
      ByteBuffer p = ByteBuffer.allocateDirect(32).order(ByteOrder.LITTLE_ENDIAN);
      ByteBuffer out = ByteBuffer.allocateDirect(4 * capacity).order(ByteOrder.LITTLE_ENDIAN);
      int[] rows = {0, 1, 63, 64, 65, capacity, 12_345, capacity - 1};
      for (int round = 0; round < rows.length + 20; round++) {
        int n = round < rows.length ? rows[round] : random.nextInt(capacity + 1);
        float a = round + 0.5f;
        Groups g = Groups.covering(n, WG, d.info().maxWorkgroupCountX());
        p.putInt(0, n).putFloat(4, a).putFloat(8, -1f).putInt(16, g.x()).putInt(20, g.y()).putInt(24, g.z());
        params.write(0, p);
        rec.run();
        rec.readOutputInto(0, out);
        for (int i = 0; i < capacity; i++) {
          float expected = i < n ? a * i - 1f : 0f;
          if (out.getFloat(4 * i) != expected) {
            fail("rows " + n + ", row " + i + ": " + out.getFloat(4 * i) + " != " + expected);
          }
        }
      }
    } finally {
      TestGpu.closeClean(d);
    }
  }

  @ParameterizedTest
  @EnumSource(TransferMode.class)
  void largeDispatch_spreadsGroupsOverY(TransferMode mode) {
    GpuDevice d = TestGpu.open(mode);
    int n = 65_536 * 8 + 3; // at workgroup size 8, more groups than lavapipe's 65,535 in x
    try (Kernel k = d.load(TestGpu.saxpy(8));
         GpuBuffer x = d.createBuffer(4L * n, BufferRole.INPUT);
         GpuBuffer y = d.createBuffer(4L * n, BufferRole.OUTPUT)) {
      Groups g = Groups.covering(n, 8, d.info().maxWorkgroupCountX());
      assertTrue(g.y() > 1 || d.info().maxWorkgroupCountX() > 65535, g.toString());
      x.write(0, TestGpu.floats(n, i -> i % 1000));
      try (PrerecordedDispatch rec = k.prerecord(List.of(x), List.of(y), null, g)) {
        rec.run();
        ByteBuffer out = rec.readOutput(0).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < n; i++) {
          assertEquals(2.5f * (i % 1000) + 1f, out.getFloat(4 * i), "row " + i);
        }
      }
      if (d.info().maxWorkgroupCountX() < Integer.MAX_VALUE) { // NVIDIA allows 2^31-1: nothing above it to ask for
        GpuException e = assertGpuError(GpuException.Code.SIZE, "workgroups in x",
            () -> k.prerecord(List.of(x), List.of(y), null, Groups.of(d.info().maxWorkgroupCountX() + 1)));
        assertTrue(e.getMessage().contains("Groups.covering"), e.getMessage());
      }
    } finally {
      TestGpu.closeClean(d);
    }
  }

  @ParameterizedTest
  @EnumSource(TransferMode.class)
  void prerecordBorrowed_uploadsOnceAndOwnsItsBuffers(TransferMode mode) {
    GpuDevice d = TestGpu.open(mode);
    int n = 256;
    Program p = Program.glsl("saxpy", TestGpu.SAXPY).workgroupSize(WG)
        .buffer(BufferDecl.input("x", 0, ElementType.FLOAT32))
        .buffer(BufferDecl.output("y", 1, ElementType.FLOAT32, n)).build();
    try (Kernel k = d.load(p)) {
      ByteBuffer x = TestGpu.floats(n, i -> i);
      try (PrerecordedDispatch rec = k.prerecordBorrowed(List.of(x), Groups.of(n / WG))) {
        x.putFloat(0, 999f); // borrowed: later changes to the caller's buffer do not reach the GPU
        for (int r = 0; r < 3; r++) {
          rec.run();
          assertEquals(1f, rec.readOutput(0).order(ByteOrder.LITTLE_ENDIAN).getFloat(0));
          assertEquals(2.5f * 255 + 1f, rec.readOutput(0).order(ByteOrder.LITTLE_ENDIAN).getFloat(4 * 255));
        }
        assertEquals(2, d.counters().buffersLive());
      }
      assertEquals(0, d.counters().buffersLive(), "closing the recording closed the buffers it owned");
    } finally {
      TestGpu.closeClean(d);
    }
  }

  @ParameterizedTest
  @EnumSource(TransferMode.class)
  void severalSteps_shareOneSubmissionAndSeeEarlierWrites(TransferMode mode) {
    GpuDevice d = TestGpu.open(mode);
    int n = 1000;
    try (Kernel k = d.load(TestGpu.saxpy(WG));
         GpuBuffer x = d.createBuffer(4L * n, BufferRole.INPUT);
         GpuBuffer y = d.createBuffer(4L * n, BufferRole.OUTPUT);
         GpuBuffer z = d.createBuffer(4L * n, BufferRole.OUTPUT)) {
      Groups g = Groups.covering(n, WG, 65535);
      x.write(0, TestGpu.floats(n, i -> i));
      long before = d.counters().dispatchesSubmitted();
      try (PrerecordedDispatch rec = d.prerecord(List.of(
          new DispatchStep(k, List.of(x), List.of(y), null, g),
          new DispatchStep(k, List.of(y), List.of(z), null, g)))) {
        rec.run();
        assertEquals(before + 1, d.counters().dispatchesSubmitted());
        ByteBuffer out = rec.readOutput(1).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < n; i++) {
          assertEquals(2.5f * (2.5f * i + 1f) + 1f, out.getFloat(4 * i), "row " + i);
        }
      }
    } finally {
      TestGpu.closeClean(d);
    }
  }

  /**
   * Device copies run ahead of the recording in the same submission, for the next replay only; on
   * lavapipe under the validation layer (AUTO: the input is written in place, so it may be copied
   * into; STAGED: its twin would overwrite it, so that is refused).
   */
  @ParameterizedTest
  @EnumSource(TransferMode.class)
  void copyBeforeNextReplay_fillsAnInputOnTheDevice_forOneReplay(TransferMode mode) {
    GpuDevice d = TestGpu.open(mode);
    int n = 1000;
    try (Kernel k = d.load(TestGpu.saxpy(WG));
         GpuBuffer x = d.createBuffer(4L * n, BufferRole.INPUT);
         GpuBuffer y = d.createBuffer(4L * n, BufferRole.OUTPUT);
         PrerecordedDispatch rec = k.prerecord(List.of(x), List.of(y), null, Groups.covering(n, WG, 65535))) {
      GpuBuffer src = d.createBuffer(4L * n, BufferRole.INPUT);
      try {
        ByteBuffer zeros = TestGpu.floats(n, i -> 0);
        x.write(0, zeros);
        if (mode == TransferMode.STAGED) {
          assertGpuError(GpuException.Code.INVALID_ARGUMENT, "copies its host twin over it",
              () -> rec.copyBeforeNextReplay(List.of(new BufferCopy(src, 0, x, 0, 4L * n))));
          return;
        }
        src.write(0, TestGpu.floats(n, i -> i));
        long commandBuffers = d.counters().commandBuffersLive();
        // the second half of src to the first half of x, and its first half to the second
        rec.copyBeforeNextReplay(List.of(new BufferCopy(src, 2L * n, x, 0, 2L * n), new BufferCopy(src, 0, x, 2L * n, 2L * n)));
        rec.replay();
        assertGpuError(GpuException.Code.IN_FLIGHT, "while a replay is in flight", () -> rec.copyBeforeNextReplay(List.of()));
        rec.await();
        assertEquals(commandBuffers + 1, d.counters().commandBuffersLive(), "one command buffer of copies, kept");
        assertTrue(rec.lastCopyNs() > 0, "the copies are timed on the device");
        ByteBuffer out = rec.readOutput(0).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < n; i++) {
          float xi = i < n / 2 ? i + n / 2 : i - n / 2;
          assertEquals(2.5f * xi + 1f, out.getFloat(4 * i), 1e-3f, "row " + i);
        }
        rec.run(); // no copies this time: x as the copies left it
        assertEquals(0, rec.lastCopyNs());
        out = rec.readOutput(0).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < n; i++) {
          assertEquals(2.5f * (i < n / 2 ? i + n / 2 : i - n / 2) + 1f, out.getFloat(4 * i), 1e-3f, "kept, row " + i);
        }
        assertGpuError(GpuException.Code.SIZE, "out of range", () -> new BufferCopy(src, 4L, x, 0, 4L * n));
        long created = d.counters().commandBuffersCreated();
        rec.copyBeforeNextReplay(List.of(new BufferCopy(src, 0, x, 0, 4L * n))); // x = src again
        rec.run();
        assertEquals(created, d.counters().commandBuffersCreated(), "the copies' command buffer is recorded again");
        assertEquals(2.5f * 7 + 1f, rec.readOutput(0).order(ByteOrder.LITTLE_ENDIAN).getFloat(4 * 7), 1e-3f);
        rec.close();
        assertEquals(commandBuffers - 1, d.counters().commandBuffersLive(), "freed with the recording, and its own");
      } finally {
        src.close();
      }
    } finally {
      TestGpu.closeClean(d);
    }
  }

  /**
   * Device copies of whole words run as a shader (DeviceCopier), four words a thread for whole 16-byte
   * units, past one grid of 65,535 groups and appended into one buffer; a copy of odd bytes beside
   * them runs as a transfer (on lavapipe, under
   * the validation layer's synchronization checks). Every bit arrives (NaN patterns too), and
   * replays with copies reuse the recording's descriptor sets.
   */
  @Test
  void deviceCopies_shaderAndBytes_keepEveryBit_andReuseTheirSets() {
    GpuDevice d = TestGpu.open(TransferMode.AUTO);
    int n = 65_535 * 256 + 1003; // more words than one grid of the copy shader covers
    Program identity = Program.glsl("identity", """
        #version 450
        layout(local_size_x_id = 0) in;
        layout(std430, set = 0, binding = 0) readonly buffer X { uint x[]; };
        layout(std430, set = 0, binding = 1) writeonly buffer Y { uint y[]; };
        void main() {
          uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
          if (i < x.length()) {
            y[i] = x[i];
          }
        }
        """).workgroupSize(WG).buffer(BufferDecl.input("x", 0, ElementType.UINT32))
        .buffer(BufferDecl.output("y", 1, ElementType.UINT32)).build();
    try (Kernel k = d.load(identity);
         GpuBuffer src = d.createBuffer(4L * n, BufferRole.INPUT);
         GpuBuffer x = d.createBuffer(4L * n, BufferRole.INPUT);
         GpuBuffer y = d.createBuffer(4L * n, BufferRole.OUTPUT);
         PrerecordedDispatch rec = k.prerecord(List.of(x), List.of(y), null, Groups.covering(n, WG, 65535))) {
      ByteBuffer bits = ByteBuffer.allocateDirect(4 * n).order(ByteOrder.LITTLE_ENDIAN);
      Random r = new Random(42);
      for (int i = 0; i < n; i++) {
        bits.putInt(4 * i, i % 7 == 0 ? 0x7fc00001 + i : r.nextInt()); // NaN payloads among them
      }
      src.write(0, bits);
      x.write(0, ByteBuffer.allocateDirect(4 * n));
      int words = n - 8;
      int half = 1000;
      List<BufferCopy> copies = List.of(new BufferCopy(src, 16, x, 0, 4L * half), // shader, 16-byte units: src words 4.. to x words 0..
          new BufferCopy(src, 16 + 4L * half, x, 4L * half, 4L * (words - half)), // words, behind it: one grid and more
          new BufferCopy(src, 7, x, 4L * words + 1, 30)); // transfer: odd offsets and length
      ByteBuffer want = ByteBuffer.allocateDirect(4 * n).order(ByteOrder.LITTLE_ENDIAN);
      for (int b = 0; b < 4 * words; b++) {
        want.put(b, bits.get(16 + b));
      }
      for (int b = 0; b < 30; b++) {
        want.put(4 * words + 1 + b, bits.get(7 + b));
      }
      long setsLive = d.counters().descriptorSetsLive();
      for (int replay = 0; replay < 2; replay++) {
        long setsCreated = d.counters().descriptorSetsCreated();
        rec.copyBeforeNextReplay(copies);
        rec.run();
        if (replay == 1) {
          assertEquals(setsCreated, d.counters().descriptorSetsCreated(), "the copies' sets are rewritten, not made again");
        }
        ByteBuffer out = rec.readOutput(0);
        for (int b = 0; b < 4 * n; b++) {
          if (out.get(b) != want.get(b)) {
            fail("replay " + replay + ", byte " + b + ": " + out.get(b) + ", want " + want.get(b));
          }
        }
      }
      assertTrue(d.counters().descriptorSetsLive() > setsLive, "the recording holds its copies' sets");
      rec.close();
      assertEquals(setsLive, d.counters().descriptorSetsLive(), "freed with the recording");
    } finally {
      TestGpu.closeClean(d);
    }
  }

  /**
   * Device copies after the recording, in the same submission: a device-only result's first rows
   * reach a host-read buffer once the replay is awaited (STAGED: into its host twin), for the next
   * replay only; a destination the host does not read is refused.
   */
  @ParameterizedTest
  @EnumSource(TransferMode.class)
  void copyAfterNextReplay_readsDeviceOnlyResultsBack_forOneReplay(TransferMode mode) {
    GpuDevice d = TestGpu.open(mode);
    int n = 1000;
    try (Kernel k = d.load(TestGpu.saxpy(WG));
         GpuBuffer x = d.createBuffer(4L * n, BufferRole.INPUT);
         GpuBuffer y = d.createBuffer(4L * n, BufferRole.SCRATCH);
         GpuBuffer sample = d.createBuffer(4L * 10, BufferRole.OUTPUT);
         PrerecordedDispatch rec = k.prerecord(List.of(x), List.of(y), null, Groups.covering(n, WG, 65535))) {
      assertGpuError(GpuException.Code.INVALID_ARGUMENT, "which the host does not read",
          () -> rec.copyAfterNextReplay(List.of(new BufferCopy(y, 0, x, 0, 40))));
      x.write(0, TestGpu.floats(n, i -> i));
      rec.copyAfterNextReplay(List.of(new BufferCopy(y, 0, sample, 0, 40)));
      rec.replay();
      assertGpuError(GpuException.Code.IN_FLIGHT, "while a replay is in flight", () -> rec.copyAfterNextReplay(List.of()));
      rec.await();
      ByteBuffer out = ByteBuffer.allocateDirect(40).order(ByteOrder.LITTLE_ENDIAN);
      sample.read(0, out);
      for (int i = 0; i < 10; i++) {
        assertEquals(2.5f * i + 1f, out.getFloat(4 * i), 1e-3f, "row " + i);
      }
      x.write(0, TestGpu.floats(n, i -> -i));
      rec.run(); // no copies this time: the sample keeps the first replay's rows
      out.clear();
      sample.read(0, out);
      assertEquals(2.5f * 9 + 1f, out.getFloat(36), 1e-3f);
    } finally {
      TestGpu.closeClean(d);
    }
  }

  @ParameterizedTest
  @EnumSource(TransferMode.class)
  void replayWhileInFlight_isAClearError(TransferMode mode) {
    GpuDevice d = TestGpu.open(mode);
    int n = 1 << 20;
    try (Kernel k = d.load(TestGpu.saxpy(WG));
         GpuBuffer x = d.createBuffer(4L * n, BufferRole.INPUT);
         GpuBuffer y = d.createBuffer(4L * n, BufferRole.OUTPUT);
         PrerecordedDispatch rec = k.prerecord(List.of(x), List.of(y), null, Groups.covering(n, WG, 65535))) {
      rec.replay();
      assertTrue(rec.isInFlight());
      assertGpuError(GpuException.Code.IN_FLIGHT, "still in flight", rec::replay);
      assertGpuError(GpuException.Code.IN_FLIGHT, "while a replay is in flight", () -> rec.readOutput(0));
      rec.await();
      assertFalse(rec.isInFlight());
      assertGpuError(GpuException.Code.INVALID_ARGUMENT, "no replay in flight", rec::await);
      rec.run();
      assertGpuError(GpuException.Code.INVALID_ARGUMENT, "out of bounds for 1 outputs", () -> rec.readOutput(1));
      assertGpuError(GpuException.Code.SIZE, "caller's buffer holds 16",
          () -> rec.readOutputInto(0, ByteBuffer.allocateDirect(16)));
      rec.replay(); // closing with a replay in flight waits for it
    } finally {
      TestGpu.closeClean(d);
    }
  }

  @ParameterizedTest
  @EnumSource(TransferMode.class)
  void descriptorSets_areCachedByAllocationAndSize(TransferMode mode) {
    GpuDevice d = TestGpu.open(mode);
    try (Kernel k = d.load(TestGpu.saxpy(WG));
         GpuBuffer x = d.createBuffer(256, BufferRole.INPUT);
         GpuBuffer y = d.createBuffer(256, BufferRole.OUTPUT);
         GpuBuffer y2 = d.createBuffer(256, BufferRole.OUTPUT)) {
      k.prerecord(List.of(x), List.of(y), null, Groups.of(1)).close();
      assertEquals(new CacheStats(0, 1, 1), k.descriptorCacheStats());
      k.prerecord(List.of(x), List.of(y), null, Groups.of(1)).close();
      assertEquals(new CacheStats(1, 1, 1), k.descriptorCacheStats());
      k.prerecord(List.of(x), List.of(y2), null, Groups.of(1)).close();
      assertEquals(new CacheStats(1, 2, 2), k.descriptorCacheStats());
      y2.close();
      assertEquals(1, k.descriptorCacheStats().entries(), "closing a buffer frees the sets that name it");
      assertEquals(1, d.counters().descriptorSetsLive());
    } finally {
      TestGpu.closeClean(d);
    }
  }

  @ParameterizedTest
  @EnumSource(TransferMode.class)
  void closingABufferStillRecorded_isRefused(TransferMode mode) {
    GpuDevice d = TestGpu.open(mode);
    try (Kernel k = d.load(TestGpu.saxpy(WG));
         GpuBuffer x = d.createBuffer(256, BufferRole.INPUT);
         GpuBuffer y = d.createBuffer(256, BufferRole.OUTPUT)) {
      PrerecordedDispatch rec = k.prerecord(List.of(x), List.of(y), null, Groups.of(1));
      assertGpuError(GpuException.Code.INVALID_ARGUMENT, "still bound in 1 recorded dispatch", x::close);
      rec.close();
      rec.close();
      assertGpuError(GpuException.Code.CLOSED, "recording is closed", rec::replay);
    } finally {
      TestGpu.closeClean(d);
    }
  }
}
