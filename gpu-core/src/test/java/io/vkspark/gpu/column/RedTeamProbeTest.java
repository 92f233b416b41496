package io.vkspark.gpu.column;

import static io.vkspark.gpu.column.KernelSignature.arg;

import io.vkspark.gpu.GpuException;
import org.junit.jupiter.api.Test;

final class RedTeamProbeTest {
  static final KernelSignature SIG = KernelSignature.of("evil", SqlType.FLOAT, arg("x", SqlType.FLOAT), arg("y", SqlType.FLOAT));
  static final KernelSignature ISIG = KernelSignature.of("ievil", SqlType.INT, arg("a", SqlType.INT), arg("b", SqlType.INT));
  static final KernelSignature LSIG = KernelSignature.of("levil", SqlType.BIGINT, arg("a", SqlType.BIGINT), arg("b", SqlType.INT));

  static void probe(KernelSignature s, String body) {
    System.out.println("PROBE START " + body.length() + " " + body.substring(0, Math.min(40, body.length())).replace("\n", "\\n"));
    System.out.flush();
    try {
      ColumnKernel k = ColumnKernel.compile(s, body);
      System.out.println("PROBE ACCEPTED: " + body.replace("\n", "\\n") + "  warnings=" + k.warnings());
    } catch (GpuException e) {
      System.out.println("PROBE refused: " + body.replace("\n", "\\n") + " -> " + e.getMessage().substring(0, Math.min(200, e.getMessage().length())));
    } catch (Throwable t) {
      System.out.println("PROBE CRASH: " + body.replace("\n", "\\n") + " -> " + t);
    }
  }

  @Test
  void probes() {
    probe(SIG, "return x + " + "1.0 + ".repeat(20000) + "0.0;");
    probe(SIG, "return x + " + "y + ".repeat(100000) + "0.0;");
    probe(SIG, "return x + float(" + "(".repeat(9000) + "1" + ")".repeat(9000) + ");");
    probe(SIG, "return x + float(" + "(".repeat(20000) + "1" + ")".repeat(20000) + ");");
    probe(SIG, "return x " + "+ -".repeat(9000) + " y;");
    probe(SIG, "return x + " + "(y * ".repeat(5000) + "1.0" + ")".repeat(5000) + ";");
    probe(SIG, "float z = x;\n" + "z = z * 1.0001 + y;\n".repeat(20000) + "return z;");
    probe(SIG, "return x +\n" + "//\n".repeat(100000) + " y;");
  }

  @Test
  void localOob() {
    try (GpuRows gpu = new GpuRows()) {
      ColumnKernel k = ColumnKernel.compile(SIG, "float a[4]; int i = int(y); a[i] = x; return a[i / 2];");
      System.out.println("PROBE OOB " + gpu.run(k, new Object[] {1f, 2f, 3f}, new Object[] {1f, 100000000f, -100000000f}));
      ColumnKernel k2 = ColumnKernel.compile(SIG, "float a[4] = float[](x, x, x, x); int i = int(y); return a[i];");
      System.out.println("PROBE OOB2 " + gpu.run(k2, new Object[] {1f, 2f, 3f}, new Object[] {1f, 100000000f, -1000f}));
    }
  }
}
