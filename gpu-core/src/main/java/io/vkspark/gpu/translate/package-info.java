/**
 * The Java UDF translator: JVM bytecode of a UDF's {@code call()} (or a lambda, or a static method)
 * into a GLSL kernel with Java's results. Entry point: {@link io.vkspark.gpu.translate.JavaTranslator};
 * result: {@link io.vkspark.gpu.translate.Translation} (a kernel, or the refusal's reason naming the
 * class, the method, the source line and the instruction).
 *
 * <h2>Pipeline</h2>
 *
 * <ol>
 *   <li><b>Read.</b> {@code Unit} loads class files (ASM) and analyses each method's frames;
 *       {@code ControlFlow} splits it into basic blocks and natural loops.</li>
 *   <li><b>Translate to IR.</b> {@code MethodTranslator} runs the instructions of each block over a
 *       symbolic operand stack of {@code Val}s (a primitive {@code Expr}, a modelled reference
 *       {@code Val.Obj} with its null flag, the UDF object, a pending comparison), reading them
 *       with {@code Instructions} (arithmetic, locals, fields as constants), {@code Invocations}
 *       (calls) and {@code Branches} (returns, jumps, switches). What it builds is typed IR only:
 *       {@code Expr} (constants, variables, operations, calls, conditionals), {@code Stmt}
 *       (declarations, assignments, {@code if}, {@code while}, {@code switch}, returns, throws) and
 *       {@code Fn} (one function per method). Every value is an immutable temporary;
 *       float and double ones are {@code precise}.</li>
 *   <li><b>Write.</b> {@code GlslWriter} turns the finished IR into GLSL text, once. No step reads
 *       back text that another step wrote.</li>
 * </ol>
 *
 * <h2>Where new features plug in</h2>
 *
 * <ul>
 *   <li><b>A value type</b> (a box, a date, a string): a record implementing {@code ObjType} (its
 *       device representation, {@link io.vkspark.gpu.translate.JType}), its JVM class in
 *       {@code ObjType.of}, its SQL type in {@code JType.sqlType} (for arguments and results), and
 *       how a constant of it is made in {@code Constants}. Locals, stack slots across branches,
 *       null checks and null results then work for it as for boxes.</li>
 *   <li><b>Library methods</b>: static ones in a call family reached from
 *       {@code LibraryCalls.translate} (by owner class; {@code ExactMath} is one), instance
 *       methods on a modelled value in {@code ObjectCalls}. A family returns an {@code Expr} (a
 *       temporary made through {@code LibraryCalls.Code}), may mark a row as throwing
 *       ({@code Code.throwIf}) or as approximate, and returns null for a method it does not know
 *       (the translator then refuses, naming the call).</li>
 *   <li><b>GLSL helpers</b> the IR calls by name: {@code Helpers} (pasted once when used).</li>
 * </ul>
 *
 * <p>May import: root, column.
 */
package io.vkspark.gpu.translate;
