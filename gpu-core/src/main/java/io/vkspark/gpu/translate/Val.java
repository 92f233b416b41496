package io.vkspark.gpu.translate;

/**
 * One value on the translator's symbolic JVM operand stack. Its expressions are operands (a
 * temporary, a variable or a constant; never an operation), so that evaluation order and later
 * stores cannot change them.
 */
sealed interface Val {
  /** Stack slots the value takes on the JVM: 2 for a long or double. */
  default int size() {
    return this instanceof Prim p && (p.e().type() == JType.J || p.e().type() == JType.D) ? 2 : 1;
  }

  /** A primitive value. */
  record Prim(Expr e) implements Val {
    JType type() {
      return e.type();
    }
  }

  /**
   * A reference the translator models ({@link ObjType}: a box, ...) as its value and a GLSL
   * {@code bool} that is true when the reference is null.
   */
  record Obj(ObjType type, Expr value, Expr isNull) implements Val {
    /** Whether the reference is null on every path (a {@code null} constant). */
    boolean alwaysNull() {
      return isNull instanceof Expr.Const c && c.isTrue();
    }

    /** Whether the reference is never null. */
    boolean neverNull() {
      return isNull instanceof Expr.Const c && c.isFalse();
    }
  }

  /**
   * A string constant ({@code ldc "..."}): accepted where its text does not matter on the device
   * (the message of {@code Objects.requireNonNull}); any other use is refused as "uses a string".
   */
  record Text(String value) implements Val {}

  /** A constant table ({@link ConstTable}): a primitive array known when translating. */
  record Table(ConstTable table) implements Val {}

  /** A local array being created: constant stores set its elements ({@link ArrayBuilder}). */
  record NewArray(ArrayBuilder builder) implements Val {}

  /** A Scala {@code object} ({@code scala.math.package$.MODULE$}, {@code Predef$}, ...): its methods are library calls. */
  record Module(String owner) implements Val {}

  /**
   * An object being constructed ({@code new scala.Some}, {@code new RichLong}): replaced, on the
   * whole stack, by its value when its constructor is called. Compared by identity.
   */
  final class Uninit implements Val {
    final String owner;

    Uninit(String owner) {
      this.owner = owner;
    }
  }

  /** What a {@code void} call leaves on the stack: nothing (never pushed). */
  record Void() implements Val {}

  /**
   * An object known when translating: the UDF object itself ({@code this}), a captured value or a
   * {@code static final} one (a Scala {@code object}'s {@code MODULE$}, a case class a closure
   * captures). Its final fields are constants ({@link Unit#field}: the UDF object's others too),
   * its methods helpers translated for this very object ({@link Unit#call}). Compared by identity.
   */
  record Known(Object value) implements Val {
    @Override
    public boolean equals(Object o) {
      return o instanceof Known k && k.value == value;
    }

    @Override
    public int hashCode() {
      return System.identityHashCode(value);
    }
  }

  /**
   * A pending comparison ({@code lcmp}, {@code dcmpg}, ...) that the next branch reads directly:
   * -1, 0 or 1, and {@code nanResult} when unordered.
   */
  record Cmp(JType type, Expr a, Expr b, int nanResult) implements Val {}

  static Prim of(Expr e) {
    return new Prim(e);
  }
}
