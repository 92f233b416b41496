package io.vkspark.gpu;

/** Hit and miss counts of a cache, with the entries it holds. */
public record CacheStats(long hits, long misses, long entries) {}
