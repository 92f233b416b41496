package io.vkspark.gpu.column.reduce;

import io.vkspark.gpu.column.InputColumn;

/**
 * An input column that knows the range of its non-null values without reading them: a table cache's
 * column, whose bounds were found once when the batch was cached. A grouped reduction keyed by it,
 * or by an expression over it, bounds each batch's keys from {@link #bounds()} instead of a pass over
 * the values on the host ({@link BatchReducer#admit}), so a batch whose values live in device memory
 * is never read on the host.
 */
public interface BoundedColumn extends InputColumn {
  /**
   * The range of the non-null values (integral ones as longs, a date as its epoch day), or null when
   * unknown; {@link KeyRange#empty()} when every value is null.
   */
  KeyRange bounds();
}
