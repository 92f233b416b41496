package io.vkspark.gpu.column.reduce;

import io.vkspark.gpu.column.input.RawMemory;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.reduce.ColumnReduction.Aggregate;
import io.vkspark.gpu.column.reduce.ColumnReduction.Function;
import io.vkspark.gpu.column.reduce.ColumnReduction.Group;
import io.vkspark.gpu.column.reduce.ColumnReduction.Grouped;
import io.vkspark.gpu.column.reduce.ColumnReduction.Value;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The host's half of a reduction: folds the partials the device wrote, in workgroup (so row)
 * order, with the same semantics as the shaders: sums add, MIN/MAX keep the first of equals and
 * order doubles as Spark does. Also turns a grouped batch's folded key slots into its groups.
 */
final class HostFold {
  /** Bytes of one workgroup's partial of one aggregate: value (8), count (4), padding (4). */
  static final int PARTIAL_BYTES = 16;

  private final List<Aggregate> aggregates;
  /** What the device computes: the aggregates, then (grouped) a hidden COUNT(*) giving each key's rows. */
  private final List<Aggregate> all;
  private final List<SqlType> callTypes;
  private final int slots;

  HostFold(List<Aggregate> aggregates, List<Aggregate> all, List<SqlType> callTypes, int slots) {
    this.aggregates = aggregates;
    this.all = all;
    this.callTypes = callTypes;
    this.slots = slots;
  }

  /** An empty accumulator per aggregate (count 0, SUM from 0 / 0.0). */
  Value[] empty() {
    Value[] v = new Value[all.size()];
    Arrays.fill(v, new Value(0, 0, 0.0));
    return v;
  }

  /** An empty accumulator per key slot. */
  Value[][] emptySlots() {
    Value[][] acc = new Value[slots][];
    for (int s = 0; s < slots; s++) {
      acc[s] = empty();
    }
    return acc;
  }

  /**
   * Folds {@code groups} workgroups' partials at {@code address} into {@code acc} (one per
   * aggregate, updated in place), in workgroup order: sums add, MIN/MAX keep the first of equals.
   */
  void fold(long address, int groups, Value[] acc) {
    for (int g = 0; g < groups; g++) {
      for (int i = 0; i < all.size(); i++) {
        long at = address + ((long) g * all.size() + i) * PARTIAL_BYTES;
        long bits = RawMemory.memGetLong(at);
        long count = RawMemory.memGetLong(at + 8) & 0xffffffffL; // the count and 4 bytes of padding
        acc[i] = combine(i, acc[i], count, bits);
      }
    }
  }

  /**
   * Grouped: folds the per-key partials at {@code address} (one dispatch's first {@code used}
   * slots, {@code aggregates + 1} each) into {@code acc[slot]}, in place; dispatches of a batch are
   * folded in order.
   */
  void foldKeyed(long address, int used, Value[][] acc) {
    int n = all.size();
    for (int s = 0; s < used; s++) {
      for (int i = 0; i < n; i++) {
        long at = address + ((long) s * n + i) * PARTIAL_BYTES;
        acc[s][i] = combine(i, acc[s][i], RawMemory.memGetLong(at + 8) & 0xffffffffL, RawMemory.memGetLong(at));
      }
    }
  }

  /** {@code acc} with one more partial ({@code count} rows; {@code bits} the int64 or double's bits). */
  private Value combine(int i, Value acc, long count, long bits) {
    if (count == 0) {
      return acc;
    }
    Aggregate a = all.get(i);
    boolean whole = ReductionGlsl.whole(a, callTypes);
    double d = Double.longBitsToDouble(bits);
    long n = acc.count() + count;
    return switch (a.function()) {
      case COUNT -> new Value(n, 0, 0.0);
      case SUM, AVG -> whole ? new Value(n, acc.integral() + bits, 0.0) : new Value(n, 0, acc.floating() + d);
      case MIN, MAX -> {
        boolean max = a.function() == Function.MAX;
        boolean better = acc.count() == 0 || (whole ? (max ? bits > acc.integral() : bits < acc.integral())
            : (max ? greater(d, acc.floating()) : greater(acc.floating(), d)));
        yield better ? new Value(n, whole ? bits : 0, whole ? 0.0 : d) : new Value(n, acc.integral(), acc.floating());
      }
    };
  }

  /** Spark's order: NaN above everything, {@code -0.0 == 0.0}. */
  static boolean greater(double x, double y) {
    return Double.isNaN(x) ? !Double.isNaN(y) : !Double.isNaN(y) && x > y;
  }

  /**
   * Grouped: the batch's groups from the folded slots: slot {@code s} is key {@code base + s}, except
   * {@code nullSlot} when the batch has null keys and {@code filterSlot} (-1: none), whose hidden count
   * is the rows a filter dropped; slots without rows give no group.
   */
  Grouped groups(long rows, Value[][] acc, long base, int nullSlot, boolean nullKeys, int filterSlot) {
    List<Group> out = new ArrayList<>();
    Group nulls = null;
    long dropped = 0;
    for (int s = 0; s < slots; s++) {
      long n = acc[s][all.size() - 1].count();
      if (s == filterSlot) {
        dropped = n;
        continue;
      }
      if (n == 0) {
        continue;
      }
      List<Value> values = List.of(acc[s]).subList(0, aggregates.size());
      if (nullKeys && s == nullSlot) {
        nulls = new Group(true, 0, n, values);
      } else {
        out.add(new Group(false, base + s, n, values));
      }
    }
    if (nulls != null) {
      out.add(nulls);
    }
    return new Grouped(rows, out, dropped);
  }
}
