package io.vkspark.gpu;

/**
 * Workgroup counts of a dispatch. {@link #covering} spreads a large count over y as well, since
 * devices cap x (lavapipe at 65,535): shaders compute their index as
 * {@code (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * local_size_x + local id}.
 */
public record Groups(int x, int y, int z) {
  public Groups {
    if (x < 0 || y < 0 || z < 0) {
      throw GpuException.of(GpuException.Code.INVALID_ARGUMENT,
          "workgroup counts (" + x + ", " + y + ", " + z + ") are negative.", "pass counts of 0 or more.");
    }
  }

  public static Groups of(int x) {
    return new Groups(x, 1, 1);
  }

  /**
   * The fewest groups of {@code workgroupSize} invocations covering {@code elements} elements,
   * with x at most {@code maxX}: {@code (min(n, maxX), ceil(n / maxX), 1)}.
   */
  public static Groups covering(long elements, int workgroupSize, int maxX) {
    long n = Sizes.divideRoundingUp(elements, workgroupSize);
    if (n == 0) {
      return new Groups(0, 1, 1);
    }
    long x = Math.min(n, maxX);
    long y = Sizes.divideRoundingUp(n, x);
    return new Groups((int) x, Sizes.toInt(y, "workgroup count in y for " + elements + " elements"), 1);
  }

  /** Total workgroups, checked. */
  public long total() {
    return Sizes.multiply(Sizes.multiply(x, y, "workgroup total"), z, "workgroup total");
  }
}
