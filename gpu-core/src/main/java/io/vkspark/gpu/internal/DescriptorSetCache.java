package io.vkspark.gpu.internal;

import static org.lwjgl.system.MemoryStack.stackPush;
import static org.lwjgl.vulkan.VK10.*;
import static org.lwjgl.vulkan.VK11.VK_ERROR_OUT_OF_POOL_MEMORY;

import io.vkspark.gpu.CacheStats;
import java.nio.LongBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.lwjgl.system.MemoryStack;
import org.lwjgl.vulkan.VkDescriptorBufferInfo;
import org.lwjgl.vulkan.VkDescriptorPoolCreateInfo;
import org.lwjgl.vulkan.VkDescriptorPoolSize;
import org.lwjgl.vulkan.VkDescriptorSetAllocateInfo;
import org.lwjgl.vulkan.VkWriteDescriptorSet;

/**
 * Descriptor sets of one kernel, cached by layout and (allocation identity, padded size) per
 * binding, as the seed's bind-group cache. Sets are written once and never updated, so one set may
 * serve several recordings; they are freed when a buffer they name closes, or with the kernel.
 */
final class DescriptorSetCache {
  private static final int SETS_PER_POOL = 64;
  private static final int DESCRIPTORS_PER_SET = 16;

  /** One binding of a set: where, what type, which buffer and range. */
  record Entry(int binding, int descriptorType, long buffer, long allocationId, long range) {}

  private record Key(int set, long[] ids) {
    @Override
    public boolean equals(Object o) {
      return o instanceof Key k && k.set == set && Arrays.equals(k.ids, ids);
    }

    @Override
    public int hashCode() {
      return 31 * set + Arrays.hashCode(ids);
    }
  }

  private record Cached(long set, long pool, long[] ids) {}

  private final VulkanDevice device;
  private final long[] layouts;
  private final Map<Key, Cached> sets = new HashMap<>();
  private final List<long[]> pools = new ArrayList<>(); // {pool}
  private final AtomicLong hits = new AtomicLong();
  private final AtomicLong misses = new AtomicLong();

  DescriptorSetCache(VulkanDevice device, long[] layouts) {
    this.device = device;
    this.layouts = layouts;
  }

  /** The set for {@code entries} of set index {@code set}, created on a miss. */
  synchronized long get(int set, List<Entry> entries) {
    long[] ids = new long[entries.size() * 3];
    for (int i = 0; i < entries.size(); i++) {
      Entry e = entries.get(i);
      ids[3 * i] = e.binding();
      ids[3 * i + 1] = e.allocationId();
      ids[3 * i + 2] = e.range();
    }
    Key key = new Key(set, ids);
    Cached c = sets.get(key);
    if (c != null) {
      hits.incrementAndGet();
      return c.set();
    }
    misses.incrementAndGet();
    long[] allocated = allocate(layouts[set]);
    write(allocated[0], entries);
    sets.put(key, new Cached(allocated[0], allocated[1], ids));
    device.counters.descriptorSetsCreated.incrementAndGet();
    device.counters.descriptorSetsLive.incrementAndGet();
    return allocated[0];
  }

  /** Frees every set naming {@code allocationId}. */
  synchronized void evict(long allocationId) {
    Iterator<Cached> it = sets.values().iterator();
    while (it.hasNext()) {
      Cached c = it.next();
      for (int i = 1; i < c.ids().length; i += 3) {
        if (c.ids()[i] == allocationId) {
          free(c);
          it.remove();
          break;
        }
      }
    }
  }

  synchronized CacheStats stats() {
    return new CacheStats(hits.get(), misses.get(), sets.size());
  }

  /** Destroys the pools (and with them every set). */
  synchronized void close() {
    device.counters.descriptorSetsLive.addAndGet(-sets.size());
    sets.clear();
    for (long[] p : pools) {
      vkDestroyDescriptorPool(device.handle, p[0], null);
    }
    pools.clear();
  }

  private void free(Cached c) {
    try (MemoryStack stack = stackPush()) {
      vkFreeDescriptorSets(device.handle, c.pool(), stack.longs(c.set()));
    }
    device.counters.descriptorSetsLive.decrementAndGet();
  }

  private long[] allocate(long layout) {
    for (long[] p : pools) {
      long set = tryAllocate(p[0], layout);
      if (set != VK_NULL_HANDLE) {
        return new long[] {set, p[0]};
      }
    }
    long pool = createPool();
    pools.add(new long[] {pool});
    long set = tryAllocate(pool, layout);
    if (set == VK_NULL_HANDLE) {
      throw Vk.error(VK_ERROR_OUT_OF_POOL_MEMORY, "vkAllocateDescriptorSets (fresh pool)");
    }
    return new long[] {set, pool};
  }

  private long tryAllocate(long pool, long layout) {
    try (MemoryStack stack = stackPush()) {
      VkDescriptorSetAllocateInfo ai = VkDescriptorSetAllocateInfo.calloc(stack).sType$Default()
          .descriptorPool(pool).pSetLayouts(stack.longs(layout));
      LongBuffer ps = stack.mallocLong(1);
      int r;
      synchronized (device.poolLock) {
        r = vkAllocateDescriptorSets(device.handle, ai, ps);
      }
      if (r == VK_ERROR_OUT_OF_POOL_MEMORY || r == VK_ERROR_FRAGMENTED_POOL) {
        return VK_NULL_HANDLE;
      }
      Vk.check(r, "vkAllocateDescriptorSets");
      return ps.get(0);
    }
  }

  private long createPool() {
    try (MemoryStack stack = stackPush()) {
      VkDescriptorPoolSize.Buffer sizes = VkDescriptorPoolSize.calloc(2, stack);
      sizes.get(0).type(VK_DESCRIPTOR_TYPE_STORAGE_BUFFER).descriptorCount(SETS_PER_POOL * DESCRIPTORS_PER_SET);
      sizes.get(1).type(VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER).descriptorCount(SETS_PER_POOL);
      VkDescriptorPoolCreateInfo ci = VkDescriptorPoolCreateInfo.calloc(stack).sType$Default()
          .flags(VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT)
          .maxSets(SETS_PER_POOL)
          .pPoolSizes(sizes);
      LongBuffer pp = stack.mallocLong(1);
      Vk.check(vkCreateDescriptorPool(device.handle, ci, null, pp), "vkCreateDescriptorPool");
      return pp.get(0);
    }
  }

  private void write(long set, List<Entry> entries) {
    if (entries.isEmpty()) {
      return;
    }
    try (MemoryStack stack = stackPush()) {
      VkWriteDescriptorSet.Buffer writes = VkWriteDescriptorSet.calloc(entries.size(), stack);
      for (int i = 0; i < entries.size(); i++) {
        Entry e = entries.get(i);
        VkDescriptorBufferInfo.Buffer info = VkDescriptorBufferInfo.calloc(1, stack)
            .buffer(e.buffer()).offset(0).range(e.range());
        writes.get(i).sType$Default()
            .dstSet(set).dstBinding(e.binding()).descriptorCount(1)
            .descriptorType(e.descriptorType())
            .pBufferInfo(info);
      }
      vkUpdateDescriptorSets(device.handle, writes, null);
    }
  }
}
