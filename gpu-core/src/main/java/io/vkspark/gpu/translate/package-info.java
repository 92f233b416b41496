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
 *       {@code Val.Obj} with its null flag, an object known when translating, {@code Val.Known}:
 *       the UDF object, a captured case class, a Scala {@code object}; a pending comparison), reading them
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
 *   <li><b>A value type</b> (a box, a date, next a string): a record or enum implementing
 *       {@code ObjType} (its device representation, a {@link io.vkspark.gpu.translate.JType}, and
 *       its SQL type for arguments and results; {@code ObjType.Box}, {@code Temporal}), its JVM
 *       class in {@code ObjType.of}, and how a constant of it is made in {@code Constants}. Locals,
 *       stack slots across branches, null checks, null results, helper arguments and results then
 *       work for it as for boxes. A value whose device form is not one primitive (a string's bytes)
 *       adds a {@code Val} variant instead, as {@code Val.Text} (a string constant, today refused
 *       where used) and {@code Val.Table} (a constant array) do.</li>
 *   <li><b>Library methods</b>: static methods over primitives in a family reached from
 *       {@code LibraryCalls.translate} by owner class ({@code ExactMath}, {@code MathCalls});
 *       methods of or about modelled values in a family of {@code ObjectCalls} ({@code Boxes},
 *       {@code DateCalls}, {@code ScalaCalls}). A family returns an {@code Expr} or {@code Val} (a
 *       temporary made through {@code LibraryCalls.Code}), may mark a row as throwing
 *       ({@code Code.throwIf}: it is recomputed with {@code call()}) or a call as approximate, and
 *       returns null for a method it does not know (the translator then refuses, naming the call).
 *       Pure calls and instructions of constants are computed on the JVM first ({@code Folding}).</li>
 *   <li><b>GLSL helpers</b> the IR calls by name: {@code Helpers}, {@code MathHelpers},
 *       {@code DateHelpers} (pasted once when used, with the helpers they need).</li>
 *   <li><b>Erased types</b> (a lambda returning {@code Object}, a Scala {@code $adapted} bridge, an
 *       {@code Option} result): {@code Results}, with the types the caller knows.</li>
 *   <li><b>Null rows on the device</b>: {@code Translation.NullAware} is the same method taking its
 *       arguments' null flags and giving its result's, made for a method that tolerates a null
 *       argument or may return null for non-null ones ({@code NullStrictness.mayReturnNull});
 *       {@code Translated.nullAwareSpec} is its kernel, whose validity {@code column.NullFlags}
 *       feeds and reads back.</li>
 * </ul>
 *
 * <p>May import: root, column.
 */
package io.vkspark.gpu.translate;
