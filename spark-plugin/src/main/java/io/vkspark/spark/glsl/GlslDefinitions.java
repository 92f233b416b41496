package io.vkspark.spark.glsl;

import io.vkspark.spark.conf.Settings;

import io.vkspark.spark.kernel.CompiledKernels;
import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.VkAnalysisException;
import io.vkspark.spark.api.GpuUdfs;
import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.api.GpuUdf;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.column.GlslSource;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.column.KernelSignature;
import io.vkspark.gpu.column.SqlType;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry$;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal$;
import org.apache.spark.sql.types.DataTypes;

/**
 * GPU UDFs written in GLSL only ({@link GlslUdf}), for users who write no Java: SQL, spark-sql, the
 * Thrift server, PySpark. A definition is a GLSL function whose types are SQL type names:
 *
 * <pre>
 * // comments and blank lines between functions are fine
 * double poly(double x) {
 *   return 1.0 + x * (2.0 + x);
 * }
 * bigint days_between(date a, date b) { return int64_t(b - a); }
 * </pre>
 *
 * <p>The result and argument types are any type name {@link SqlType#parse} accepts ({@code int},
 * {@code bigint}, {@code float}, {@code double}, {@code boolean}, {@code date}, {@code timestamp}
 * and their synonyms); the body sees each argument with its GLSL type, as a {@link GpuKernel} body
 * does. Two ways in: files named by {@code spark.vkspark.glsl} (registered in every session by
 * {@code VkSqlExtensions}) and the SQL function {@code vkspark_define} ({@link #define}).
 */
public final class GlslDefinitions {
  /** The SQL function that defines GLSL-only UDFs in the running session. */
  public static final String DEFINE = "vkspark_define";
  /** Most arguments: a Spark Java UDF goes to UDF10 through vkspark's registration. */
  static final int MAX_ARGS = 10;
  /**
   * Longest {@code vkspark_define} text, in characters (all its arguments together): far above any
   * real UDF, and small enough that shaderc compiles even a chain of additions this long in
   * seconds (a 240 KB chain kept it busy for minutes). Files of {@code spark.vkspark.glsl} are the
   * administrator's and have only shaderc's own limit.
   */
  public static final int MAX_DEFINE_CHARS = 32 * 1024;
  /** Names a GLSL-only UDF may not take: vkspark's own SQL functions, now and to come. */
  static final String RESERVED_PREFIX = "vkspark_";
  /**
   * The application-wide GPU UDF names of each application (by id) and where each comes from
   * ({@code spark.vkspark.glsl} or {@code spark.vkspark.functions}), recorded by
   * {@link VkSqlExtensions}: {@code vkspark_define} refuses to redefine them.
   */
  private static final Map<String, Map<String, String>> APP_WIDE = new ConcurrentHashMap<>();

  private static final Pattern HEADER = Pattern.compile("(?s)\\s*(.+?)\\s+([A-Za-z_][A-Za-z0-9_]*)\\s*\\((.*)\\)\\s*");
  private static final Pattern ARG = Pattern.compile("(?s)\\s*(.+?)\\s+([A-Za-z_][A-Za-z0-9_]*)\\s*");
  private static final Pattern BODY_LINE = Pattern.compile("line (\\d+) of its body");
  private static final String FORMAT = "write each function as '<result type> <name>(<type> <arg>, ...) { <GLSL "
      + "statements with return> }' with SQL type names, e.g. 'double poly(double x) { return 1.0 + x * x; }'";

  private GlslDefinitions() {}

  /** One parsed function: the UDF, and the lines where it and its body start (1-based, in its text). */
  public record Parsed(GlslUdf udf, int line, int bodyLine) {}

  /**
   * The GLSL functions of {@code text}, in order. {@code origin} names the text in messages (a
   * file, or {@code vkspark_define}); an error names it, the line and the UDF.
   *
   * @throws GpuException INVALID_ARGUMENT (or UNSUPPORTED for a type) with the line and a Fix
   */
  static List<Parsed> parse(String text, String origin) {
    checkNoNul(text, origin, 0);
    List<Parsed> out = new ArrayList<>();
    Map<String, Integer> lines = new LinkedHashMap<>();
    int n = text.length();
    int i = 0;
    int line = 1;
    while (true) {
      // skip blanks and comments between functions
      while (i < n) {
        char ch = text.charAt(i);
        int end = commentEnd(text, i, origin, line, null);
        if (end != i) {
          line += count(text, i, end, '\n');
          i = end;
        } else if (ch == '\n') {
          line++;
          i++;
        } else if (Character.isWhitespace(ch)) {
          i++;
        } else {
          break;
        }
      }
      if (i >= n) {
        return out;
      }
      int start = i;
      int startLine = line;
      StringBuilder header = new StringBuilder();
      while (i < n && text.charAt(i) != '{') {
        char ch = text.charAt(i);
        int end = commentEnd(text, i, origin, line, null);
        if (end != i) {
          line += count(text, i, end, '\n');
          header.append(text.charAt(i + 1) == '*' ? " " : ""); // a block comment separates like a space
          i = end;
          continue;
        }
        if (ch == ';' || ch == '}') {
          throw error(origin, startLine, null, "'" + clip(text.substring(start, i + 1)) + "' is not a function with a "
              + "body in { }", FORMAT);
        }
        if (ch == '\n') {
          line++;
        }
        header.append(ch);
        i++;
      }
      if (i >= n) {
        throw error(origin, startLine, null, "'" + clip(text.substring(start)) + "' has no body in { }", FORMAT);
      }
      Header h = header(header.toString(), origin, startLine);
      int bodyLine = line;
      int open = i++;
      int depth = 1;
      while (i < n && depth > 0) {
        char ch = text.charAt(i);
        int end = commentEnd(text, i, origin, line, h.name);
        if (end != i) {
          line += count(text, i, end, '\n');
          i = end;
          continue;
        }
        if (ch == '{') {
          depth++;
        } else if (ch == '}') {
          depth--;
        } else if (ch == '\n') {
          line++;
        }
        i++;
      }
      if (depth > 0) {
        throw error(origin, bodyLine, h.name, "its body has no closing '}'", "end the body of '" + h.name + "' with }");
      }
      String body = text.substring(open + 1, i - 1);
      Integer before = lines.putIfAbsent(h.name, startLine);
      if (before != null) {
        throw error(origin, startLine, h.name, "it is defined twice, on lines " + before + " and " + startLine,
            "remove one definition of '" + h.name + "', or rename it");
      }
      out.add(new Parsed(udf(h, body, where(origin, startLine)), startLine, bodyLine));
    }
  }

  /** A signature ({@code double poly(double x)}) and a body (an expression, or statements with return). */
  static GlslUdf parse(String signature, String body, String origin) {
    checkNoNul(signature, origin, 0);
    checkNoNul(body, origin, 1);
    return udf(header(signature, origin, 1), body, origin);
  }

  /**
   * A NUL character ends the text where C code reads it (shaderc's input, logs, terminals) and is
   * never part of GLSL: refused, with its line ({@code firstLine} lines before the text's first).
   */
  private static void checkNoNul(String text, String origin, int firstLine) {
    int at = text.indexOf('\0');
    if (at >= 0) {
      throw error(origin, firstLine + 1 + count(text, 0, at, '\n'), null, "the definition has a NUL character (\\0, "
          + "U+0000) at character " + (at + 1) + ", which GLSL does not allow", "remove the NUL character; if the text "
          + "comes from a file, check that it is a UTF-8 text file");
    }
  }

  /** Types are kept as the SQL text the user wrote (checked by {@link #type}): decimals carry precision and scale. */
  private record Header(String name, String result, List<String> argNames, List<String> argTypes, String where) {}

  private static Header header(String text, String origin, int line) {
    Matcher m = HEADER.matcher(text);
    if (!m.matches()) {
      throw error(origin, line, null, "'" + clip(text) + "' is not a signature", FORMAT);
    }
    String name = m.group(2);
    String result = type(m.group(1), origin, line, name, "its result type");
    List<String> names = new ArrayList<>();
    List<String> types = new ArrayList<>();
    String args = m.group(3).trim();
    if (args.isEmpty()) {
      throw error(origin, line, name, "it has no arguments", "give '" + name + "' at least one argument: a GPU UDF "
          + "computes a column from columns (for a constant, write a SQL literal)");
    }
    for (String a : splitTopLevel(args)) {
      Matcher am = ARG.matcher(a);
      if (!am.matches()) {
        throw error(origin, line, name, "argument '" + a.trim() + "' is not '<type> <name>'",
            "write each argument as a SQL type and a name, e.g. 'double x'");
      }
      names.add(am.group(2));
      types.add(type(am.group(1), origin, line, name, "argument '" + am.group(2) + "'"));
    }
    if (names.size() > MAX_ARGS) {
      throw error(origin, line, name, "it has " + names.size() + " arguments", "use at most " + MAX_ARGS + " arguments");
    }
    return new Header(name, result, names, types, where(origin, line));
  }

  private static String type(String text, String origin, int line, String udf, String what) {
    try {
      KernelSignature.arg("x", text.trim());   // the type, with a decimal's precision and scale, must parse
      return text.trim();
    } catch (GpuException e) {
      throw error(origin, line, udf, what + ": " + e.what(), e.fix());
    }
  }

  private static GlslUdf udf(Header h, String body, String where) {
    try {
      GpuKernel.Builder b = GpuKernel.returns(h.result);
      for (int a = 0; a < h.argNames.size(); a++) {
        b.arg(h.argNames.get(a), h.argTypes.get(a));
      }
      return new GlslUdf(h.name, b.body(body, h.name), where);
    } catch (GpuException e) {
      throw new GpuException(e.code(), where + ": " + e.getMessage(), e);
    }
  }

  /** Splits at commas outside parentheses and angle brackets ({@code decimal(10, 2)}, {@code map<int, int>}). */
  private static List<String> splitTopLevel(String s) {
    List<String> out = new ArrayList<>();
    int depth = 0;
    int from = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '(' || c == '<') {
        depth++;
      } else if (c == ')' || c == '>') {
        depth--;
      } else if (c == ',' && depth == 0) {
        out.add(s.substring(from, i));
        from = i + 1;
      }
    }
    out.add(s.substring(from));
    return out;
  }

  /** {@link GlslSource#commentEnd}, with an unclosed block comment refused at its {@code line}. */
  private static int commentEnd(String text, int i, String origin, int line, String name) {
    int end = GlslSource.commentEnd(text, i);
    if (end < 0) {
      String what = name == null ? "a /* comment is not closed" : "a /* comment in its body is not closed";
      throw error(origin, line, name, what, "close it with */");
    }
    return end;
  }

  private static int count(String s, int from, int to, char c) {
    int k = 0;
    for (int i = from; i < to; i++) {
      if (s.charAt(i) == c) {
        k++;
      }
    }
    return k;
  }

  private static String clip(String s) {
    String one = s.strip().replaceAll("\\s+", " ");
    return one.length() > 60 ? one.substring(0, 57) + "..." : one;
  }

  private static String where(String origin, int line) {
    return origin + " line " + line;
  }

  private static GpuException error(String origin, int line, String udf, String problem, String fix) {
    return GpuException.of(Code.INVALID_ARGUMENT, where(origin, line) + ": " + (udf == null ? "" : "GPU UDF '" + udf
        + "': ") + sentence(problem), sentence(fix));
  }

  private static String sentence(String s) {
    return s.endsWith(".") ? s : s + ".";
  }

  // ---- spark.vkspark.glsl ----

  /**
   * The GLSL-only UDFs of every file of {@code spark.vkspark.glsl}, parsed, checked (no name twice,
   * none named like a Spark built-in) and compiled: a mistake fails here, on the driver at start,
   * naming the file, the line and the UDF.
   */
  public static List<GlslUdf> configured(VkConf conf) {
    Map<String, GlslUdf> byName = new LinkedHashMap<>();
    for (Path p : conf.glslFiles()) {
      String text;
      try {
        text = Files.readString(p, StandardCharsets.UTF_8);
      } catch (IOException | RuntimeException e) {
        throw new GpuException(Code.INVALID_ARGUMENT, Settings.GLSL.key() + " names " + p + ", which cannot be read (" + e
            + "). Fix: correct the path in " + Settings.GLSL.key() + " (comma-separated GLSL files on the driver).", e);
      }
      String origin = Settings.GLSL.key() + " file " + p;
      for (Parsed f : parse(text, origin)) {
        GlslUdf u = f.udf();
        GlslUdf other = byName.putIfAbsent(u.name(), u);
        if (other != null) {
          throw GpuException.of(Code.INVALID_ARGUMENT, u.origin() + ": GPU UDF '" + u.name() + "' is already defined at "
              + other.origin() + ".", "rename one of them, or remove one definition.");
        }
        checkNotBuiltin(u);
        compile(u, f, conf);
      }
    }
    return List.copyOf(byName.values());
  }

  /** A GLSL-only UDF of {@code spark.vkspark.glsl} may not take the name of a class of {@code spark.vkspark.functions}. */
  public static void checkNoClash(List<GpuUdf> classes, List<GlslUdf> glsl) {
    for (GpuUdf c : classes) {
      for (GlslUdf g : glsl) {
        if (c.name().equals(g.name())) {
          throw GpuException.of(Code.INVALID_ARGUMENT, g.origin() + ": GPU UDF '" + g.name() + "' has the name of class "
              + c.getClass().getName() + " in " + Settings.FUNCTIONS.key() + ".",
              "rename the GLSL function, or remove one of them.");
        }
      }
    }
  }

  /** Compiles a file's UDF; a body error names the file line as well as the body line. */
  private static void compile(GlslUdf u, Parsed f, VkConf conf) {
    try {
      CompiledKernels.compile(u.kernel().spec(u.name()), conf);
    } catch (GpuException e) {
      Matcher m = BODY_LINE.matcher(e.getMessage());
      StringBuilder s = new StringBuilder();
      while (m.find()) {
        int fileLine = f.bodyLine() + Integer.parseInt(m.group(1)) - 1;
        m.appendReplacement(s, Matcher.quoteReplacement(m.group() + " (line " + fileLine + " of the file)"));
      }
      m.appendTail(s);
      throw new GpuException(e.code(), u.origin() + ": " + s, e);
    }
  }

  private static void checkNotBuiltin(GlslUdf u) {
    if (u.name().toLowerCase(Locale.ROOT).startsWith(RESERVED_PREFIX)) {
      throw VkAnalysisException.raise(VkAnalysisException.Condition.VKSPARK_GPU_UDF_SHADOWS_BUILTIN, u.name(),
          GpuException.of(Code.INVALID_ARGUMENT, u.origin() + ": GPU UDF '" + u.name() + "' has a name reserved for "
              + "vkspark's own SQL functions (" + RESERVED_PREFIX + "..., such as " + DEFINE + "), so it could never "
              + "be called.", "give it a name that does not start with " + RESERVED_PREFIX + "."));
    }
    if (FunctionRegistry$.MODULE$.builtin()
        .functionExists(new FunctionIdentifier(u.name()))) {
      throw VkAnalysisException.raise(VkAnalysisException.Condition.VKSPARK_GPU_UDF_SHADOWS_BUILTIN, u.name(),
          GpuException.of(Code.INVALID_ARGUMENT, u.origin() + ": GPU UDF '" + u.name() + "' would replace Spark's "
              + "built-in function " + u.name() + ".", "give it another name."));
    }
  }

  // ---- vkspark_define ----

  /**
   * The function builder of {@code vkspark_define}, run on the driver while a query is analyzed:
   * {@code vkspark_define('<definitions>')} (one or more functions as in a GLSL file) or
   * {@code vkspark_define('<signature>', '<body>')}. It parses, checks and compiles the UDFs,
   * registers them in the active session (replacing a function of the same name, as
   * {@code spark.udf().register} does) and returns their signatures as a string literal.
   * Refused: when {@code spark.vkspark.define.enabled} is false (static), text over
   * {@link #MAX_DEFINE_CHARS}, reserved and built-in names, and application-wide names (the
   * session went on running the application's body after such a redefinition reported success;
   * refusing says so, and one name keeps one meaning on a shared server).
   */
  public static Expression define(List<Expression> args) {
    SparkSession spark = SparkSession.active();
    VkConf conf = VkConf.of(spark);
    if (!conf.define()) {
      throw disabled(spark);
    }
    if (args.isEmpty() || args.size() > 2) {
      throw VkAnalysisException.raise(VkAnalysisException.Condition.VKSPARK_GPU_UDF_WRONG_NUM_ARGS, DEFINE,
          GpuException.of(Code.INVALID_ARGUMENT, DEFINE + " takes 1 or 2 arguments but was called with " + args.size() + ".",
              "call " + DEFINE + "('double poly(double x) { return x * x; }') or " + DEFINE
                  + "('double poly(double x)', 'x * x')."));
    }
    List<String> text = new ArrayList<>();
    for (int a = 0; a < args.size(); a++) {
      Expression e = args.get(a);
      Object v = e.foldable() && e.dataType().equals(DataTypes.StringType) ? e.eval(null) : null;
      if (v == null) {
        throw VkAnalysisException.raise(VkAnalysisException.Condition.VKSPARK_GPU_UDF_ARGUMENT_TYPE, DEFINE,
            GpuException.of(Code.INVALID_ARGUMENT, "argument " + (a + 1) + " of " + DEFINE + " is " + e.sql()
                + ", not a string literal.", "pass the definition as a string literal, e.g. " + DEFINE
                + "('double poly(double x) { return x * x; }')."));
      }
      text.add(v.toString());
    }
    int chars = text.stream().mapToInt(String::length).sum();
    if (chars > MAX_DEFINE_CHARS) {
      throw VkAnalysisException.raise(VkAnalysisException.Condition.VKSPARK_GPU_UDF_UNSUPPORTED, DEFINE,
          GpuException.of(Code.SIZE, DEFINE + " was given " + chars + " characters of definitions, more than it takes ("
              + MAX_DEFINE_CHARS + ").", "define fewer functions per call, or shorten them (long GLSL compiles "
              + "slowly); for longer ones, have the administrator list a file in " + Settings.GLSL.key() + "."));
    }
    List<GlslUdf> udfs;
    try {
      udfs = args.size() == 1 ? parse(text.get(0), DEFINE).stream().map(Parsed::udf).toList()
          : List.of(parse(text.get(0), text.get(1), DEFINE));
    } catch (GpuException e) {
      throw VkAnalysisException.raise(VkAnalysisException.Condition.VKSPARK_GPU_UDF_INVALID_SIGNATURE, DEFINE, e);
    }
    if (udfs.isEmpty()) {
      throw VkAnalysisException.raise(VkAnalysisException.Condition.VKSPARK_GPU_UDF_INVALID_SIGNATURE, DEFINE,
          GpuException.of(Code.INVALID_ARGUMENT, DEFINE + " was given no function.", FORMAT + "."));
    }
    for (GlslUdf u : udfs) {
      checkNotBuiltin(u);
      checkNotAppWide(spark, u);
      VkAnalysisException.compiling(u.name(), () -> CompiledKernels.compile(u.kernel().spec(u.name()), conf)); // always: the CPU fallback runs the same SPIR-V
    }
    for (GlslUdf u : udfs) {
      GpuUdfs.register(spark, u.name(), u);
    }
    return Literal$.MODULE$.create(String.join("; ", udfs.stream().map(GlslUdf::signature).toList()),
        DataTypes.StringType);
  }

  /** The analysis error of {@code vkspark_define} on a server that turned it off. */
  private static RuntimeException disabled(SparkSession spark) {
    String key = Settings.DEFINE_ENABLED.key();
    String asked = spark.conf().contains(key) ? spark.conf().get(key) : null;
    return VkAnalysisException.raise(VkAnalysisException.Condition.VKSPARK_GPU_UDF_UNSUPPORTED, DEFINE,
        GpuException.of(Code.UNSUPPORTED, DEFINE + " is turned off on this server: " + key
                + " is false in its configuration" + (asked != null && !asked.trim().equalsIgnoreCase("false")
                ? " (a session's SET of it changes nothing: it is static)" : "") + ".",
            "call the GPU UDFs the administrator provides (" + Settings.GLSL.key() + ", " + Settings.FUNCTIONS.key()
                + "), or have the server started with " + key + "=true."));
  }

  /** Records the application-wide GPU UDFs of application {@code appId}: name to where it comes from. */
  public static void recordAppWide(String appId, Map<String, String> origins) {
    Map<String, String> byName = new HashMap<>();
    origins.forEach((name, origin) -> byName.put(name.toLowerCase(Locale.ROOT), origin)); // as Spark looks up
    APP_WIDE.put(appId == null ? "" : appId, Map.copyOf(byName));
  }

  private static void checkNotAppWide(SparkSession spark, GlslUdf u) {
    String appId = spark.sparkContext().applicationId();
    String origin = APP_WIDE.getOrDefault(appId == null ? "" : appId, Map.of()).get(u.name().toLowerCase(Locale.ROOT));
    if (origin != null) {
      throw VkAnalysisException.raise(VkAnalysisException.Condition.VKSPARK_GPU_UDF_SHADOWS_BUILTIN, u.name(),
          GpuException.of(Code.INVALID_ARGUMENT, u.origin() + ": GPU UDF '" + u.name() + "' is an application-wide "
                  + "function, from " + origin + "; " + DEFINE + " does not redefine it.",
              "give the new definition another name, or change it where it comes from (" + Settings.GLSL.key() + " or "
                  + Settings.FUNCTIONS.key() + ", read when the application starts)."));
    }
  }
}
