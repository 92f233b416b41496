package io.vkspark.gpu.internal;

import static org.lwjgl.system.MemoryStack.stackPush;
import static org.lwjgl.vulkan.VK10.*;

import io.vkspark.gpu.BufferCopy;
import java.nio.ByteBuffer;
import java.nio.LongBuffer;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.lwjgl.system.MemoryStack;
import org.lwjgl.system.MemoryUtil;
import org.lwjgl.vulkan.VkBufferCopy;
import org.lwjgl.vulkan.VkCommandBuffer;
import org.lwjgl.vulkan.VkCommandBufferBeginInfo;
import org.lwjgl.vulkan.VkComputePipelineCreateInfo;
import org.lwjgl.vulkan.VkDescriptorBufferInfo;
import org.lwjgl.vulkan.VkDescriptorPoolCreateInfo;
import org.lwjgl.vulkan.VkDescriptorPoolSize;
import org.lwjgl.vulkan.VkDescriptorSetAllocateInfo;
import org.lwjgl.vulkan.VkDescriptorSetLayoutBinding;
import org.lwjgl.vulkan.VkDescriptorSetLayoutCreateInfo;
import org.lwjgl.vulkan.VkPipelineLayoutCreateInfo;
import org.lwjgl.vulkan.VkPushConstantRange;
import org.lwjgl.vulkan.VkShaderModuleCreateInfo;
import org.lwjgl.vulkan.VkWriteDescriptorSet;

/**
 * Device-to-device copies (a cached column's device copy into a dispatch's input buffer) as a
 * compute dispatch, one of the device's pipelines. Why not {@code vkCmdCopyBuffer}: on the H200
 * it moved cached columns at about 230 GB/s on the compute queue (13.3 ms of a 50 M-row sweep
 * query's 35.7 ms of device time), where the shader cores copy at memory speed. A copy whose
 * offsets or length are not whole 32-bit words, or whose source is staged, still uses
 * {@code vkCmdCopyBuffer}.
 *
 * <p>Each recording owns its descriptor sets ({@link Sets}): its copy command buffer is recorded
 * again for every replay with copies, after the previous replay was awaited, so the sets are
 * rewritten in place and a steady stream of batches creates no Vulkan object.
 */
final class DeviceCopier implements VulkanDevice.Child {
  private static final int WORKGROUP = 256;
  private static final int MAX_GROUPS = 65_535; // every device's maxComputeWorkGroupCount[0] is at least this
  /**
   * The copy shader, with {@code T} a 32-bit word ({@code uint}) or four of them ({@code uvec4}): a
   * copy whose offsets and length are whole 16-byte units moves four words a thread (on the H200 a
   * word a thread moved an 8 MB column in about 20 us, latency-bound).
   */
  private static final String SOURCE = """
      #version 450
      layout(local_size_x = 256) in;
      layout(std430, set = 0, binding = 0) readonly buffer Src { T src[]; };
      layout(std430, set = 0, binding = 1) writeonly buffer Dst { T dst[]; };
      layout(push_constant) uniform Copy { uint srcItem; uint dstItem; uint items; } pc;
      void main() {
        uint stride = gl_NumWorkGroups.x * 256u;
        for (uint i = gl_GlobalInvocationID.x; i < pc.items; i += stride) {
          dst[pc.dstItem + i] = src[pc.srcItem + i];
        }
      }
      """;

  private final VulkanDevice device;
  private final long setLayout;
  private final long pipelineLayout;
  /** Per item size, a word ({@link #WORD}) and four ({@link #QUAD}): shader modules and pipelines. */
  private final long[] modules;
  private final long[] pipelines;
  private static final int WORD = 0;
  private static final int QUAD = 1;
  /** The most bytes one storage-buffer binding covers (the shader binds whole buffers up to it). */
  private final long maxRange;

  private DeviceCopier(VulkanDevice device, long setLayout, long pipelineLayout, long[] modules, long[] pipelines) {
    this.device = device;
    this.maxRange = Math.min(device.info().maxStorageBufferRange(), Integer.MAX_VALUE);
    this.setLayout = setLayout;
    this.pipelineLayout = pipelineLayout;
    this.modules = modules;
    this.pipelines = pipelines;
  }

  static DeviceCopier create(VulkanDevice device) {
    long[] modules = new long[2];
    long[] pipelines = new long[2];
    long setLayout = VK_NULL_HANDLE;
    long pipelineLayout = VK_NULL_HANDLE;
    try (MemoryStack stack = stackPush()) {
      LongBuffer pl = stack.mallocLong(1);
      VkDescriptorSetLayoutBinding.Buffer b = VkDescriptorSetLayoutBinding.calloc(2, stack);
      for (int i = 0; i < 2; i++) {
        b.get(i).binding(i).descriptorType(VK_DESCRIPTOR_TYPE_STORAGE_BUFFER).descriptorCount(1)
            .stageFlags(VK_SHADER_STAGE_COMPUTE_BIT);
      }
      Vk.check(vkCreateDescriptorSetLayout(device.handle,
          VkDescriptorSetLayoutCreateInfo.calloc(stack).sType$Default().pBindings(b), null, pl),
          "vkCreateDescriptorSetLayout");
      setLayout = pl.get(0);
      Vk.check(vkCreatePipelineLayout(device.handle, VkPipelineLayoutCreateInfo.calloc(stack).sType$Default()
          .pSetLayouts(stack.longs(setLayout))
          .pPushConstantRanges(VkPushConstantRange.calloc(1, stack).stageFlags(VK_SHADER_STAGE_COMPUTE_BIT).size(12)),
          null, pl), "vkCreatePipelineLayout");
      pipelineLayout = pl.get(0);
      for (int item : new int[] {WORD, QUAD}) {
        String type = item == WORD ? "uint" : "uvec4";
        byte[] spirv = GlslCompiler.compileOrThrow("vk_device_copy_" + type + ".comp",
            SOURCE.replace("#version 450\n", "#version 450\n#define T " + type + "\n"), device.options().shaderCacheDir());
        ByteBuffer code = MemoryUtil.memAlloc(spirv.length).put(spirv).flip();
        try {
          Vk.check(vkCreateShaderModule(device.handle,
              VkShaderModuleCreateInfo.calloc(stack).sType$Default().pCode(code), null, pl), "vkCreateShaderModule");
        } finally {
          MemoryUtil.memFree(code);
        }
        modules[item] = pl.get(0);
        VkComputePipelineCreateInfo.Buffer ci = VkComputePipelineCreateInfo.calloc(1, stack).sType$Default()
            .layout(pipelineLayout);
        ci.stage().sType$Default().stage(VK_SHADER_STAGE_COMPUTE_BIT).module(modules[item]).pName(stack.UTF8("main"));
        Vk.check(vkCreateComputePipelines(device.handle, device.pipelineCache, ci, null, pl),
            "vkCreateComputePipelines('vk_device_copy_" + type + "')");
        pipelines[item] = pl.get(0);
      }
      DeviceCopier c = new DeviceCopier(device, setLayout, pipelineLayout, modules, pipelines);
      device.adopt(c);
      return c;
    } catch (RuntimeException e) {
      destroy(device, setLayout, pipelineLayout, modules, pipelines);
      throw e;
    }
  }

  private static void destroy(VulkanDevice device, long setLayout, long pipelineLayout, long[] modules, long[] pipelines) {
    for (long p : pipelines) {
      if (p != VK_NULL_HANDLE) {
        vkDestroyPipeline(device.handle, p, null);
      }
    }
    for (long m : modules) {
      if (m != VK_NULL_HANDLE) {
        vkDestroyShaderModule(device.handle, m, null);
      }
    }
    VulkanKernel.destroyLayouts(device, VK_NULL_HANDLE, new long[] {setLayout}, pipelineLayout);
  }

  /** Whether {@code c} runs as a shader: whole words, within one binding's range, from an unstaged source. */
  boolean serves(BufferCopy c) {
    VulkanBuffer src = (VulkanBuffer) c.src();
    VulkanBuffer dst = (VulkanBuffer) c.dst();
    return !src.isStaged() && ((c.srcOffset() | c.dstOffset() | c.bytes()) & 3) == 0
        && Math.min(src.paddedLength, maxRange) >= c.srcOffset() + c.bytes()
        && Math.min(dst.paddedLength, maxRange) >= c.dstOffset() + c.bytes();
  }

  /**
   * Records {@code copies} into {@code cb}: shader copies with {@code sets} (rewritten here), the
   * others with {@code vkCmdCopyBuffer}. Copies into different buffers run side by side; a copy
   * into a buffer written before it waits (the shader binds whole buffers, so disjoint ranges of one
   * buffer are not known to be disjoint). The caller orders the copies with what comes before and
   * after.
   */
  void record(VkCommandBuffer cb, List<BufferCopy> copies, Sets sets, MemoryStack stack) {
    long[] handles = sets.atLeast(copies.size());
    int bound = -1;
    Set<VulkanBuffer> written = new HashSet<>();
    for (int i = 0; i < copies.size(); i++) {
      BufferCopy c = copies.get(i);
      VulkanBuffer src = (VulkanBuffer) c.src();
      VulkanBuffer dst = (VulkanBuffer) c.dst();
      if (!written.add(dst)) {
        int stages = VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
        int writes = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT;
        VulkanDispatch.barrier(cb, stack, stages, writes, stages, writes);
        written.clear();
        written.add(dst);
      }
      if (!serves(c)) {
        transfer(cb, c, false, stack);
        continue;
      }
      VkWriteDescriptorSet.Buffer w = VkWriteDescriptorSet.calloc(2, stack);
      for (int b = 0; b < 2; b++) {
        VulkanBuffer buf = b == 0 ? src : dst;
        w.get(b).sType$Default().dstSet(handles[i]).dstBinding(b).descriptorCount(1)
            .descriptorType(VK_DESCRIPTOR_TYPE_STORAGE_BUFFER)
            .pBufferInfo(VkDescriptorBufferInfo.calloc(1, stack).buffer(buf.buffer).range(Math.min(buf.paddedLength, maxRange)));
      }
      vkUpdateDescriptorSets(device.handle, w, null);
      int item = ((c.srcOffset() | c.dstOffset() | c.bytes()) & 15) == 0 ? QUAD : WORD;
      if (item != bound) {
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines[item]);
        bound = item;
      }
      vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipelineLayout, 0, stack.longs(handles[i]), null);
      int shift = item == QUAD ? 4 : 2;
      int items = (int) (c.bytes() >>> shift);
      vkCmdPushConstants(cb, pipelineLayout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
          stack.ints((int) (c.srcOffset() >>> shift), (int) (c.dstOffset() >>> shift), items));
      vkCmdDispatch(cb, Math.min(MAX_GROUPS, (items + WORKGROUP - 1) / WORKGROUP), 1, 1);
    }
  }

  /**
   * Records {@code cb} (the pool lock held): {@code copies} after a barrier, timed with
   * {@code queries} (none: the null handle); with {@code copier}, before a recording (whole words
   * as a shader), which orders its reads after them with the barrier it begins with; without, after
   * one, into host-read memory (a few rows: transfers), then a barrier for the host's reads.
   */
  static void recordCommands(VkCommandBuffer cb, List<BufferCopy> copies, DeviceCopier copier, Sets sets, long queries,
                             MemoryStack stack) {
    Vk.check(vkBeginCommandBuffer(cb, VkCommandBufferBeginInfo.calloc(stack).sType$Default()
        .flags(VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT)), "vkBeginCommandBuffer");
    int copyStages = VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    VulkanDispatch.barrier(cb, stack, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT, copyStages,
        VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    if (queries != VK_NULL_HANDLE) {
      vkCmdResetQueryPool(cb, queries, 0, 2);
      vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries, 0);
    }
    if (copier != null) {
      copier.record(cb, copies, sets, stack);
    } else {
      for (BufferCopy c : copies) {
        transfer(cb, c, true, stack);
      }
    }
    if (queries != VK_NULL_HANDLE) {
      vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, 1);
    }
    if (copier == null) {
      VulkanDispatch.barrier(cb, stack, copyStages, VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT,
          VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    } // before a recording, none: the recording, next in the same submission, begins with an all-commands barrier
    Vk.check(vkEndCommandBuffer(cb), "vkEndCommandBuffer"); // a failed recording is reset by the next begin
  }

  /**
   * {@code c} as a transfer: before a recording from a staged source's host twin (what the host
   * wrote; a destination there is never staged), after one into a staged destination's host twin
   * (what the host reads).
   */
  private static void transfer(VkCommandBuffer cb, BufferCopy c, boolean after, MemoryStack stack) {
    VulkanBuffer src = (VulkanBuffer) c.src();
    VulkanBuffer dst = (VulkanBuffer) c.dst();
    vkCmdCopyBuffer(cb, src.isStaged() && !after ? src.twin : src.buffer, dst.isStaged() && after ? dst.twin : dst.buffer,
        VkBufferCopy.calloc(1, stack).srcOffset(c.srcOffset()).dstOffset(c.dstOffset()).size(c.bytes()));
  }

  /** A recording's descriptor sets for its copies, grown by doubling; freed with the recording. */
  final class Sets {
    private long pool = VK_NULL_HANDLE;
    private long[] sets = new long[0];

    long[] atLeast(int n) {
      if (n <= sets.length) {
        return sets;
      }
      close();
      int count = Math.max(4, Integer.highestOneBit(n - 1) << 1);
      try (MemoryStack stack = stackPush()) {
        LongBuffer pl = stack.mallocLong(1);
        Vk.check(vkCreateDescriptorPool(device.handle, VkDescriptorPoolCreateInfo.calloc(stack).sType$Default()
            .maxSets(count).pPoolSizes(VkDescriptorPoolSize.calloc(1, stack)
                .type(VK_DESCRIPTOR_TYPE_STORAGE_BUFFER).descriptorCount(2 * count)), null, pl),
            "vkCreateDescriptorPool");
        pool = pl.get(0);
        LongBuffer layouts = stack.mallocLong(count);
        for (int i = 0; i < count; i++) {
          layouts.put(i, setLayout);
        }
        LongBuffer out = stack.mallocLong(count);
        synchronized (device.poolLock) {
          Vk.check(vkAllocateDescriptorSets(device.handle, VkDescriptorSetAllocateInfo.calloc(stack).sType$Default()
              .descriptorPool(pool).pSetLayouts(layouts), out), "vkAllocateDescriptorSets");
        }
        sets = new long[count];
        out.get(sets);
      }
      device.counters.descriptorSetsCreated.addAndGet(count);
      device.counters.descriptorSetsLive.addAndGet(count);
      return sets;
    }

    void close() {
      if (pool != VK_NULL_HANDLE) {
        vkDestroyDescriptorPool(device.handle, pool, null);
        device.counters.descriptorSetsLive.addAndGet(-sets.length);
        pool = VK_NULL_HANDLE;
        sets = new long[0];
      }
    }
  }

  @Override
  public int closeOrder() {
    return 2;
  }

  @Override
  public void close() {
    device.closeChild(this, () -> destroy(device, setLayout, pipelineLayout, modules, pipelines));
  }
}
