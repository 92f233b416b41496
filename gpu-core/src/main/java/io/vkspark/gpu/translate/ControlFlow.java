package io.vkspark.gpu.translate;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.ToIntFunction;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.JumpInsnNode;
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.LookupSwitchInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TableSwitchInsnNode;

/**
 * A method's basic blocks and how they are laid out as structured GLSL, which has no {@code goto}.
 * Each block gets a flag, set by the blocks that jump to it; blocks are emitted in an order where
 * each follows every block that can reach it without going round a loop, each guarded by its flag.
 * A loop (a natural loop of a reducible flow graph, which javac always produces) becomes
 * {@code while (flag of its header) { its blocks }}: a jump back to the header sets its flag again,
 * a jump out sets the flag of a block after the loop. Early returns are GLSL returns.
 */
final class ControlFlow {
  /** Instructions {@code [first, last]} of the method (indices into its instruction list). */
  record Block(int id, int first, int last) {}

  /** Where a block's jumps go, and the statement that takes one. */
  interface Exits {
    int target(LabelNode label);

    int fallthrough();

    default Stmt go(int block) {
      return new Stmt.Assign(flag(block), Expr.TRUE);
    }
  }

  /** The code of one block. */
  interface BlockCode {
    List<Stmt> of(Block b, Exits exits);
  }

  /** Block {@code b}'s flag: set when a jump to it is taken. */
  static Var flag(int b) {
    return new Var("f" + b, JType.Z, Var.Kind.FLAG);
  }

  private final List<Block> blocks = new ArrayList<>();
  private final Map<LabelNode, Integer> labels = new HashMap<>();
  private final List<List<Integer>> succ = new ArrayList<>();
  private final BitSet reachable = new BitSet();
  /** Loop header to the blocks of its loop (merged over its back edges). */
  private final Map<Integer, BitSet> loops = new HashMap<>();

  private ControlFlow() {}

  static ControlFlow of(MethodNode m, java.util.function.BiFunction<Integer, String, Untranslatable> refuseAt,
                        ToIntFunction<AbstractInsnNode> lineOf) {
    for (AbstractInsnNode insn : m.instructions) {
      if (insn.getOpcode() == Opcodes.MONITORENTER) {
        throw refuseAt.apply(lineOf.applyAsInt(insn), "synchronized [monitorenter]");
      }
    }
    if (m.tryCatchBlocks != null && !m.tryCatchBlocks.isEmpty()) {
      org.objectweb.asm.tree.TryCatchBlockNode t = m.tryCatchBlocks.get(0);
      AbstractInsnNode first = t.start;
      while (first != null && first.getOpcode() < 0) {
        first = first.getNext();
      }
      throw refuseAt.apply(lineOf.applyAsInt(first == null ? t.start : first), "catches exceptions [try/catch of "
          + (t.type == null ? "any (finally)" : t.type.replace('/', '.')) + "]");
    }
    Function<String, Untranslatable> refuse = what -> refuseAt.apply(-1, what);
    ControlFlow cf = new ControlFlow();
    cf.split(m);
    cf.link(m);
    cf.findLoops(refuse);
    return cf;
  }

  private void split(MethodNode m) {
    BitSet leaders = new BitSet();
    leaders.set(0);
    int n = m.instructions.size();
    for (int i = 0; i < n; i++) {
      AbstractInsnNode insn = m.instructions.get(i);
      if (insn instanceof JumpInsnNode j) {
        leaders.set(m.instructions.indexOf(j.label));
      } else if (insn instanceof TableSwitchInsnNode t) {
        leaders.set(m.instructions.indexOf(t.dflt));
        t.labels.forEach(l -> leaders.set(m.instructions.indexOf(l)));
      } else if (insn instanceof LookupSwitchInsnNode l) {
        leaders.set(m.instructions.indexOf(l.dflt));
        l.labels.forEach(x -> leaders.set(m.instructions.indexOf(x)));
      }
      if (ends(insn) && i + 1 < n) {
        leaders.set(i + 1);
      }
    }
    for (int start = 0; start < n; ) {
      int next = leaders.nextSetBit(start + 1);
      int end = next < 0 ? n : next;
      int id = blocks.size();
      blocks.add(new Block(id, start, end - 1));
      for (int i = start; i < end; i++) {
        if (m.instructions.get(i) instanceof LabelNode l) {
          labels.put(l, id);
        }
      }
      start = end;
    }
  }

  private static boolean ends(AbstractInsnNode insn) {
    int op = insn.getOpcode();
    return insn instanceof JumpInsnNode || insn instanceof TableSwitchInsnNode || insn instanceof LookupSwitchInsnNode
        || (op >= Opcodes.IRETURN && op <= Opcodes.RETURN) || op == Opcodes.ATHROW;
  }

  private void link(MethodNode m) {
    for (Block b : blocks) {
      List<Integer> s = new ArrayList<>();
      AbstractInsnNode last = lastReal(m, b);
      int op = last == null ? -1 : last.getOpcode();
      if (last instanceof JumpInsnNode j) {
        s.add(labels.get(j.label));
        if (op != Opcodes.GOTO) {
          s.add(b.id() + 1);
        }
      } else if (last instanceof TableSwitchInsnNode t) {
        s.add(labels.get(t.dflt));
        t.labels.forEach(l -> s.add(labels.get(l)));
      } else if (last instanceof LookupSwitchInsnNode l) {
        s.add(labels.get(l.dflt));
        l.labels.forEach(x -> s.add(labels.get(x)));
      } else if (!(op >= Opcodes.IRETURN && op <= Opcodes.RETURN) && op != Opcodes.ATHROW && b.id() + 1 < blocks.size()) {
        s.add(b.id() + 1);
      }
      succ.add(List.copyOf(new TreeSet<>(s)));
    }
    List<Integer> work = new ArrayList<>(List.of(0));
    reachable.set(0);
    while (!work.isEmpty()) {
      int b = work.remove(work.size() - 1);
      for (int t : succ.get(b)) {
        if (!reachable.get(t)) {
          reachable.set(t);
          work.add(t);
        }
      }
    }
  }

  private static AbstractInsnNode lastReal(MethodNode m, Block b) {
    for (int i = b.last(); i >= b.first(); i--) {
      AbstractInsnNode insn = m.instructions.get(i);
      if (insn.getOpcode() >= 0) {
        return insn;
      }
    }
    return null;
  }

  /** Dominators, back edges and natural loops; a retreating edge that is not a back edge is refused. */
  private void findLoops(Function<String, Untranslatable> refuse) {
    int n = blocks.size();
    List<Integer> rpo = reversePostOrder();
    BitSet[] dom = new BitSet[n];
    for (int b : rpo) {
      dom[b] = new BitSet();
      if (b == 0) {
        dom[b].set(0);
      } else {
        dom[b].set(0, n);
      }
    }
    List<List<Integer>> pred = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      pred.add(new ArrayList<>());
    }
    for (int b : rpo) {
      for (int t : succ.get(b)) {
        pred.get(t).add(b);
      }
    }
    boolean changed = true;
    while (changed) {
      changed = false;
      for (int b : rpo) {
        if (b == 0) {
          continue;
        }
        BitSet d = new BitSet();
        d.set(0, n);
        for (int p : pred.get(b)) {
          d.and(dom[p]);
        }
        d.set(b);
        if (!d.equals(dom[b])) {
          dom[b] = d;
          changed = true;
        }
      }
    }
    // retreating edges (to an ancestor in a depth-first search) must be back edges
    int[] state = new int[n];
    checkReducible(0, state, dom, refuse);
    for (int u : rpo) {
      for (int h : succ.get(u)) {
        if (dom[u].get(h)) { // back edge u -> h
          BitSet body = loops.computeIfAbsent(h, k -> {
            BitSet s = new BitSet();
            s.set(k);
            return s;
          });
          List<Integer> work = new ArrayList<>();
          if (!body.get(u)) {
            body.set(u);
            work.add(u);
          }
          while (!work.isEmpty()) {
            int x = work.remove(work.size() - 1);
            for (int p : pred.get(x)) {
              if (!body.get(p)) {
                body.set(p);
                work.add(p);
              }
            }
          }
        }
      }
    }
  }

  private void checkReducible(int b, int[] state, BitSet[] dom, Function<String, Untranslatable> refuse) {
    state[b] = 1;
    for (int t : succ.get(b)) {
      if (state[t] == 1 && !dom[b].get(t)) {
        throw refuse.apply("has control flow that is not structured (an irreducible loop)");
      }
      if (state[t] == 0) {
        checkReducible(t, state, dom, refuse);
      }
    }
    state[b] = 2;
  }

  private List<Integer> reversePostOrder() {
    List<Integer> post = new ArrayList<>();
    BitSet seen = new BitSet();
    post(0, seen, post);
    java.util.Collections.reverse(post);
    return post;
  }

  private void post(int b, BitSet seen, List<Integer> out) {
    seen.set(b);
    for (int t : succ.get(b)) {
      if (!seen.get(t)) {
        post(t, seen, out);
      }
    }
    out.add(b);
  }

  /** The index of block {@code id}'s first instruction. */
  int first(int id) {
    return blocks.get(id).first();
  }

  /** The reachable blocks' ids. */
  List<Integer> blocks() {
    return reachable.stream().boxed().toList();
  }

  /** The whole method's code. */
  List<Stmt> code(BlockCode code) {
    List<Stmt> out = new ArrayList<>();
    region(out, reachable, -1, code);
    return out;
  }

  /** The code of blocks {@code nodes} (the loop of {@code header}, or the whole method when -1). */
  private void region(List<Stmt> out, BitSet nodes, int header, BlockCode code) {
    // the loops directly inside this region, by header
    Map<Integer, BitSet> inner = new HashMap<>();
    for (Map.Entry<Integer, BitSet> l : loops.entrySet()) {
      int h = l.getKey();
      if (h == header || !nodes.get(h)) {
        continue;
      }
      boolean outermost = true;
      for (Map.Entry<Integer, BitSet> o : loops.entrySet()) {
        int oh = o.getKey();
        if (oh != h && oh != header && nodes.get(oh) && o.getValue().get(h) && !l.getValue().get(oh)) {
          outermost = false;
          break;
        }
      }
      if (outermost) {
        inner.put(h, l.getValue());
      }
    }
    int[] rep = new int[blocks.size()];
    for (int b = nodes.nextSetBit(0); b >= 0; b = nodes.nextSetBit(b + 1)) {
      rep[b] = b;
    }
    inner.forEach((h, body) -> body.stream().filter(nodes::get).forEach(b -> rep[b] = h));
    // topological order of the collapsed region (edges back to this region's header left out)
    Map<Integer, TreeSet<Integer>> edges = new HashMap<>();
    Map<Integer, Integer> indegree = new HashMap<>();
    for (int b = nodes.nextSetBit(0); b >= 0; b = nodes.nextSetBit(b + 1)) {
      indegree.putIfAbsent(rep[b], 0);
    }
    for (int b = nodes.nextSetBit(0); b >= 0; b = nodes.nextSetBit(b + 1)) {
      for (int t : succ.get(b)) {
        if (!nodes.get(t) || t == header || rep[t] == rep[b]) {
          continue;
        }
        if (edges.computeIfAbsent(rep[b], k -> new TreeSet<>()).add(rep[t])) {
          indegree.merge(rep[t], 1, Integer::sum);
        }
      }
    }
    TreeSet<Integer> ready = new TreeSet<>();
    indegree.forEach((b, d) -> {
      if (d == 0) {
        ready.add(b);
      }
    });
    while (!ready.isEmpty()) {
      int b = ready.pollFirst();
      if (inner.containsKey(b)) {
        List<Stmt> body = new ArrayList<>();
        region(body, inner.get(b), b, code);
        out.add(new Stmt.While(flag(b).ref(), body));
      } else {
        Block block = blocks.get(b);
        List<Stmt> body = new ArrayList<>();
        body.add(new Stmt.Assign(flag(b), Expr.FALSE));
        body.addAll(code.of(block, new Exits() {
          @Override
          public int target(LabelNode label) {
            return labels.get(label);
          }

          @Override
          public int fallthrough() {
            return b + 1;
          }
        }));
        out.add(new Stmt.If(flag(b).ref(), body, List.of()));
      }
      for (int t : edges.getOrDefault(b, new TreeSet<>())) {
        if (indegree.merge(t, -1, Integer::sum) == 0) {
          ready.add(t);
        }
      }
    }
  }
}
