package io.vkspark.gpu.translate;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.analysis.Analyzer;
import org.objectweb.asm.tree.analysis.AnalyzerException;
import org.objectweb.asm.tree.analysis.BasicValue;
import org.objectweb.asm.tree.analysis.Frame;
import org.objectweb.asm.tree.analysis.SimpleVerifier;

/**
 * One translation: the UDF's class files, the objects whose fields are read as constants (the UDF
 * object and the objects known when translating, {@link Val.Known}), the helper methods translated
 * so far (each once per receiver and known arguments, callees before callers, recursion refused)
 * and the translator's GLSL helpers they use.
 */
final class Unit {
  /**
   * A method being translated, with its analysis.
   *
   * @param self the object it runs on ({@code this}, known when translating); null for a static method
   */
  record Method(ClassNode owner, MethodNode node, Frame<BasicValue>[] frames, Map<Integer, ObjType> objSlots,
                Map<Integer, Object> constants, Map<Integer, ObjType> erasedArgs, Object self) {
    String source() {
      return Type.getObjectType(owner.name).getClassName() + "." + node.name;
    }

    /** The modelled type of argument {@code i}: its descriptor's, or the one found for an erased {@code Object}. */
    ObjType argType(int i) {
      ObjType o = erasedArgs.get(i);
      return o != null ? o : ObjType.of(Type.getArgumentTypes(node.desc)[i]);
    }

    /** Argument {@code i}, declared {@code Object}, holds {@code o}s (see {@link Results#erasedArgs}). */
    void eraseArg(int i, ObjType o) {
      erasedArgs.put(i, o);
      objSlots.put(Results.slot(node, i), o);
    }
  }

  /**
   * A translated helper method.
   *
   * @param box the box it returns (its null flag comes back in an {@code out} parameter), or null
   */
  record Called(String function, JType returns, boolean mayThrow, ObjType box) {}

  private final ClassLoader loader;
  /** The UDF object: its fields are read as constants, final or not (a Spark UDF's state is set before planning). */
  private final Object udf;
  /** Numbers of the objects known when translating, for the keys of helpers translated per object. */
  private final Map<Object, Integer> known = new java.util.IdentityHashMap<>();
  private final Map<String, ClassNode> classes = new HashMap<>();
  private final Map<String, Called> called = new HashMap<>();
  private final Set<String> inProgress = new HashSet<>();
  private final Set<String> helpers = new LinkedHashSet<>();
  private final Set<String> approximate = new java.util.TreeSet<>();
  private final List<Fn> functions = new ArrayList<>();
  private final List<ConstTable> tables = new ArrayList<>();
  /** The translation's string constants and the row state its string code uses. */
  final StringPool strings = new StringPool();
  private int nextFunction;

  Unit(ClassLoader loader, Object udf) {
    this.loader = loader;
    this.udf = udf;
  }

  ClassNode classNode(String internalName) {
    ClassNode c = classes.get(internalName);
    if (c != null) {
      return c;
    }
    String resource = internalName + ".class";
    try (InputStream in = loader == null ? ClassLoader.getSystemResourceAsStream(resource) : loader.getResourceAsStream(resource)) {
      if (in == null) {
        throw new Untranslatable(Type.getObjectType(internalName).getClassName() + ": its class file cannot be read");
      }
      c = new ClassNode();
      new ClassReader(in.readAllBytes()).accept(c, ClassReader.SKIP_FRAMES);
    } catch (IOException e) {
      throw new Untranslatable(Type.getObjectType(internalName).getClassName() + ": its class file cannot be read (" + e + ")");
    }
    classes.put(internalName, c);
    return c;
  }

  /**
   * {@code name desc} of class {@code owner}, analysed, with {@code constants} for some of its
   * arguments, running on {@code self} (ignored for a static method).
   */
  Method method(ClassNode owner, String name, String desc, Map<Integer, Object> constants, Object self) {
    MethodNode node = null;
    for (MethodNode m : owner.methods) {
      if (m.name.equals(name) && m.desc.equals(desc)) {
        node = m;
      }
    }
    String source = Type.getObjectType(owner.name).getClassName() + "." + name;
    if (node == null) {
      throw new Untranslatable(source + ": no such method " + desc);
    }
    if ((node.access & (Opcodes.ACC_ABSTRACT | Opcodes.ACC_NATIVE)) != 0) {
      throw new Untranslatable(source + ": abstract or native");
    }
    if ((node.access & Opcodes.ACC_SYNCHRONIZED) != 0) {
      throw new Untranslatable(source + ": synchronized");
    }
    SimpleVerifier verifier = new SimpleVerifier(Type.getObjectType(owner.name),
        owner.superName == null ? null : Type.getObjectType(owner.superName),
        owner.interfaces.stream().map(Type::getObjectType).toList(), (owner.access & Opcodes.ACC_INTERFACE) != 0);
    verifier.setClassLoader(loader == null ? ClassLoader.getSystemClassLoader() : loader);
    Frame<BasicValue>[] frames;
    try {
      frames = new Analyzer<>(verifier).analyze(owner.name, node);
    } catch (AnalyzerException | RuntimeException e) {
      throw new Untranslatable(source + ": its bytecode cannot be analysed (" + e.getMessage() + ")");
    }
    boolean isStatic = (node.access & Opcodes.ACC_STATIC) != 0;
    Map<Integer, ObjType> boxes = new HashMap<>();
    Set<Integer> nullOnly = new HashSet<>();
    for (Frame<BasicValue> f : frames) {
      if (f == null) {
        continue;
      }
      for (int l = isStatic ? 0 : 1; l < f.getLocals(); l++) {
        Type t = f.getLocal(l).getType();
        if (t == null || t.getSort() != Type.OBJECT) {
          continue;
        }
        if (t.getInternalName().equals("null")) {
          nullOnly.add(l);
          continue;
        }
        ObjType o = ObjType.of(t);
        if (o != null) {
          ObjType before = boxes.putIfAbsent(l, o);
          if (before != null && !before.equals(o)) {
            throw new Untranslatable(source + ": local variable " + l + " holds both a " + before.className() + " and a "
                + o.className());
          }
        }
      }
    }
    for (int l : nullOnly) {
      boxes.putIfAbsent(l, new ObjType.Box(Type.INT_TYPE)); // only ever null: any box will do
    }
    return new Method(owner, node, frames, boxes, constants, new HashMap<>(), isStatic ? null : self);
  }

  Untranslatable refuse(Method m, int line, String what) {
    return new Untranslatable(m.source() + (line > 0 ? " line " + line : "") + ": " + what);
  }

  /**
   * Field {@code name} of class {@code owner}: a static one, or one of object {@code on}, which must
   * be final unless {@code on} is the UDF object (a non-final field of another object may change
   * after planning, and the kernel would keep the value read now).
   */
  /**
   * Whether static field {@code f} holds a value fixed once its class is initialized: a final
   * field, or a Scala object's {@code MODULE$}, which Scala 2.12 emits without {@code final}
   * (assigned in the object's constructor) and 2.13 with it; either way the one instance.
   */
  static boolean fixedStatic(Field f) {
    return Modifier.isFinal(f.getModifiers()) || f.getName().equals("MODULE$") && f.getType() == f.getDeclaringClass()
        && f.getDeclaringClass().getName().endsWith("$");
  }

  Field field(Method m, int line, String owner, String name, Object on) {
    Class<?> c;
    try {
      c = Class.forName(Type.getObjectType(owner).getClassName(), true, loader);
    } catch (ClassNotFoundException | LinkageError e) {
      throw refuse(m, line, "reads a field of " + Type.getObjectType(owner).getClassName() + ", which does not load");
    }
    for (Class<?> k = c; k != null; k = k.getSuperclass()) {
      for (Field f : k.getDeclaredFields()) {
        if (!f.getName().equals(name)) {
          continue;
        }
        if (Modifier.isStatic(f.getModifiers())) {
          return f;
        }
        if (on != null && k.isInstance(on)) {
          if (on != udf && !Modifier.isFinal(f.getModifiers())) {
            throw refuse(m, line, "reads field " + name + " of " + on.getClass().getName() + ", which is not final "
                + "(a var: it may change after the kernel is made, which would keep the value read when planning)");
          }
          return f;
        }
      }
    }
    throw refuse(m, line, "reads field " + name + " of " + c.getName() + " of an object not known when translating");
  }

  /** A number for {@code o}, the same for the same object during this translation. */
  int known(Object o) {
    return known.computeIfAbsent(o, k -> known.size());
  }

  /**
   * A helper method called from {@code from}: translated once per {@code self} (the object it runs
   * on, null for a static method) and {@code knownArgs} (arguments known when translating, by
   * index: they are no parameters of the GLSL function), as a GLSL function.
   */
  Called call(Method from, int line, MethodInsnNode call, Object self, Map<Integer, Object> knownArgs) {
    StringBuilder k = new StringBuilder(call.owner + "." + call.name + call.desc);
    if (self != null) {
      k.append(" on #").append(known(self));
    }
    knownArgs.forEach((i, o) -> k.append(" ").append(i).append("=#").append(known(o)));
    String key = k.toString();
    Called c = called.get(key);
    if (c != null) {
      return c;
    }
    if (!inProgress.add(key)) {
      throw refuse(from, line, "is recursive (" + call.name + " calls itself, directly or not)");
    }
    Type[] args = Type.getArgumentTypes(call.desc);
    for (int i = 0; i < args.length; i++) {
      Type a = args[i];
      if (JType.of(a) == null && ObjType.of(a) == null && !knownArgs.containsKey(i)) {
        throw refuse(from, line, "calls " + call.name + " with a " + a.getClassName()
            + " (helpers take primitives and their boxes)");
      }
    }
    Method callee = method(classNode(call.owner), call.name, call.desc, knownArgs, self);
    Type rt = Type.getReturnType(call.desc);
    ObjType erased = Results.erased(callee, callee.source(), null, this);
    ObjType box = erased != null ? erased : ObjType.of(rt);
    if (box == null && JType.of(rt) == null) {
      throw refuse(from, line, "calls " + call.name + ", which returns a " + rt.getClassName()
          + " (helpers return primitives and their boxes)");
    }
    String fn = "vkt_f" + (++nextFunction);
    MethodTranslator t = new MethodTranslator(this, callee, fn, true, erased);
    functions.add(t.translate());
    c = new Called(fn, t.returns, t.mayThrow, box);
    called.put(key, c);
    inProgress.remove(key);
    return c;
  }

  /** Marks {@code key} (owner.name desc) as being translated: a call back into it is recursion. */
  void enter(String key) {
    inProgress.add(key);
  }

  /** Marks the translator's helper {@code name} as used; returns it. */
  String helper(String name) {
    for (String n : Helpers.needs(name)) {
      helper(n);
    }
    helpers.add(name);
    return name;
  }

  /** Notes a call whose device version is not bit-exact. */
  void approximate(String call) {
    approximate.add(call);
  }

  /** The calls noted by {@link #approximate}, sorted. */
  List<String> approximations() {
    return List.copyOf(approximate);
  }

  /**
   * The table of {@code values} (one declaration per distinct contents); null when the tables
   * would hold more elements than a translation may ({@link ConstTable#MAX_ELEMENTS}).
   */
  ConstTable table(JType elem, List<Expr.Const> values) {
    ConstTable t = new ConstTable("vkt_c" + tables.size(), elem, values);
    for (ConstTable o : tables) {
      if (o.sameValues(t)) {
        return o;
      }
    }
    int total = tables.stream().mapToInt(ConstTable::length).sum() + t.length();
    if (total > ConstTable.MAX_ELEMENTS) {
      return null;
    }
    tables.add(t);
    return t;
  }

  /** Adds the main function (after its helpers). */
  void addMain(Fn main) {
    functions.add(main);
  }

  /** The helpers used and every translated function, callees first. */
  String functions() {
    return functions(null);
  }

  /** As {@link #functions()}, with {@code main} in place of the main function added last (null: as added). */
  String functions(Fn main) {
    StringBuilder s = new StringBuilder(strings.declarations());
    for (String h : helpers) {
      s.append(Helpers.text(h)).append('\n');
    }
    tables.forEach(t -> s.append(t.declaration()).append('\n'));
    for (int i = 0; i < functions.size(); i++) {
      s.append(GlslWriter.function(main != null && i == functions.size() - 1 ? main : functions.get(i)));
    }
    return s.toString();
  }
}
