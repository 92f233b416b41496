package io.vkspark.gpu.column.run;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.column.KernelSignature;
import io.vkspark.gpu.column.input.Bits;
import io.vkspark.gpu.column.input.RawMemory;

/**
 * Widens a decimal call's results from the kernel's unscaled int64 to Arrow's Decimal128, where a
 * value wider than the result's precision is caught: Spark's rule for a UDF's {@code BigDecimal}
 * is null, or an error under ANSI mode ({@link DecimalOverflow}).
 */
final class DecimalResults {
  private DecimalResults() {
  }

  /**
   * Writes {@code n} unscaled int64 results at {@code src} as Decimal128 (sign-extended) at
   * {@code dst} from row {@code at}; a non-null value with more digits than the result's precision
   * becomes null (its bit in {@code validity} cleared) or fails the batch.
   *
   * @return the values made null
   * @throws GpuException OVERFLOW under {@link DecimalOverflow#ERROR}
   */
  static long widen(KernelSignature sig, DecimalOverflow policy, long src, long dst, long validity, int at, int n) {
    long max = sig.resultDecimal().maxUnscaled();
    long nulls = 0;
    for (int r = 0; r < n; r++) {
      long v = RawMemory.memGetLong(src + 8L * r);
      int row = at + r;
      if ((v > max || v < -max) && Bits.get(validity, row)) {
        if (policy == DecimalOverflow.ERROR) {
          throw GpuException.of(Code.OVERFLOW, "GPU UDF '" + sig.name() + "' returned " + sig.resultDecimal().value(v)
                  + " for row " + row + " of the batch, which does not fit its result type " + sig.resultSqlName() + ".",
              "return values of at most " + sig.resultDecimal().precision() + " digits from '" + sig.name()
                  + "', declare a wider decimal result, or let overflow give null (spark.sql.ansi.enabled=false).");
        }
        Bits.clear(validity, row);
        nulls++;
        v = 0;
      }
      long d = dst + 16L * row;
      RawMemory.memPutLong(d, v);
      RawMemory.memPutLong(d + 8, v >> 63);
    }
    return nulls;
  }
}
