package io.vkspark.spark.plan;

import io.vkspark.gpu.translate.Translation;
import io.vkspark.spark.udf.CountedFunction;
import io.vkspark.spark.exec.call.DeviceArg;
import io.vkspark.spark.kernel.CompiledKernels;
import io.vkspark.gpu.column.ArgOps;
import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.spark.udf.ScalaUdfs;
import io.vkspark.spark.udf.TranslatedUdf;
import io.vkspark.spark.api.GpuUdf;
import io.vkspark.spark.exec.call.GpuUdfCall;
import io.vkspark.spark.exec.call.Placement;
import io.vkspark.spark.shim.Scala;
import io.vkspark.spark.exec.VkGpuEvalExec;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.If;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression$;
import org.apache.spark.sql.catalyst.expressions.PlanExpression;
import org.apache.spark.sql.catalyst.expressions.ScalaUDF;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.catalyst.trees.TreeNodeTag;
import org.apache.spark.sql.execution.FilterExec;
import org.apache.spark.sql.execution.LeafExecNode;
import org.apache.spark.sql.execution.ProjectExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.types.Metadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.runtime.AbstractFunction1;
import scala.runtime.AbstractPartialFunction;
import scala.runtime.BoxedUnit;

/**
 * The physical rule that moves GPU UDF calls out of projections and filters into a
 * {@link VkGpuEvalExec} below them, innermost calls first (a GPU UDF whose argument is another GPU
 * UDF becomes two stacked nodes). Arguments that are not plain columns are computed by a
 * projection under the node, which passes through only the child's columns still used above it
 * (fewer columns to carry through the node). Calls left to Spark, and calls inside operators
 * vkspark does not plan, are tagged with the reason for EXPLAIN.
 */
public final class InsertGpuEval extends Rule<SparkPlan> {
  static final TreeNodeTag<String> FALLBACK = new TreeNodeTag<>("vkspark.fallback");

  private final SparkSession session;

  public InsertGpuEval(SparkSession session) {
    this.session = session;
  }

  @Override
  public SparkPlan apply(SparkPlan plan) {
    GpuPlanner planner = new GpuPlanner(session);
    if (!planner.conf().enabled()) {
      tagLeftovers(plan, planner);
      return plan;
    }
    SparkPlan out = plan.transformUp(new AbstractPartialFunction<SparkPlan, SparkPlan>() {
      @Override
      public boolean isDefinedAt(SparkPlan p) {
        return (p instanceof ProjectExec pe && Scala.list(pe.projectList()).stream().anyMatch(e -> hasGpuUdf((Expression) e, planner)))
            || (p instanceof FilterExec fe && hasGpuUdf(fe.condition(), planner));
      }

      @Override
      public SparkPlan apply(SparkPlan p) {
        return p instanceof ProjectExec pe ? project(pe, planner) : filter((FilterExec) p, planner);
      }
    });
    return countAndTagLeftovers(out, planner);
  }

  static boolean hasGpuUdf(Expression e, GpuPlanner planner) {
    return e.find(x -> x instanceof ScalaUDF u && planner.udf(u).isPresent()).isDefined();
  }

  private SparkPlan project(ProjectExec p, GpuPlanner planner) {
    List<Expression> exprs = new ArrayList<>(Scala.list(p.projectList()).stream().map(e -> (Expression) e).toList());
    Extracted x = extract(exprs, List.of(), p.child(), planner);
    if (x == null) {
      return p;
    }
    List<NamedExpression> list = x.expressions().stream().map(e -> (NamedExpression) e).toList();
    return new ProjectExec(Scala.seq(list), x.child());
  }

  private SparkPlan filter(FilterExec f, GpuPlanner planner) {
    Extracted x = extract(new ArrayList<>(List.of(f.condition())), Scala.list(f.child().output()), f.child(), planner);
    if (x == null) {
      return f;
    }
    FilterExec filtered = new FilterExec(x.expressions().get(0), x.child());
    List<NamedExpression> original = Scala.list(f.output()).stream().map(a -> (NamedExpression) a).toList();
    return new ProjectExec(Scala.seq(original), filtered);
  }

  /** Rewritten expressions over a new child that computes the extracted calls. */
  private record Extracted(List<Expression> expressions, SparkPlan child) {}

  private Extracted extract(List<Expression> exprs, List<Attribute> keep, SparkPlan child, GpuPlanner planner) {
    Map<Expression, GpuPlanner.Decision> decisions = new LinkedHashMap<>();
    List<Expression> nulled = nullCalls(exprs, decisions, planner);
    boolean changed = !nulled.equals(exprs);
    exprs = nulled;
    while (true) {
      Map<Expression, CallSites.Site> sites = sites(exprs);
      Map<Expression, Expression> guards = CallSites.guards(exprs);
      // Calls we can extract now: safe GPU UDF calls with no extractable call below them.
      Map<Expression, ScalaUDF> ready = new LinkedHashMap<>();
      for (Expression e : exprs) {
        e.foreach(node -> {
          if (node instanceof ScalaUDF u && extractable(u, sites, decisions, planner)
              && !hasExtractableBelow(u, sites, decisions, planner)
              && guardReady(guards.get(u.canonicalized()), sites, decisions, planner)) {
            ready.putIfAbsent(u.canonicalized(), u);
          }
          return BoxedUnit.UNIT;
        });
      }
      if (ready.isEmpty()) {
        return changed ? new Extracted(exprs, child) : null;
      }
      changed = true;
      // The calls' result columns, and the expressions above rewritten to read them: what they
      // still read decides which of the child's columns must pass through the node.
      Map<Expression, AttributeReference> results = new LinkedHashMap<>();
      for (Map.Entry<Expression, ScalaUDF> entry : ready.entrySet()) {
        ScalaUDF u = entry.getValue();
        results.put(entry.getKey(), new AttributeReference(GpuPlanner.name(u), u.dataType(), true, Metadata.empty(),
            NamedExpression$.MODULE$.newExprId(), Scala.seq(List.of())));
      }
      List<Expression> rewritten = new ArrayList<>();
      for (Expression e : exprs) {
        rewritten.add(e.transformUp(CallSites.replaceCalls(results)));
      }
      // Arguments that are not columns of the child are computed by a projection below, which
      // passes through only the columns still used: by the rewritten expressions, by the calls
      // (column arguments, guards) and by the operator's own output (keep: a filter's columns).
      List<Attribute> childOutput = new ArrayList<>(Scala.list(child.output()));
      List<NamedExpression> preProject = new ArrayList<>();
      Map<Expression, Attribute> argColumns = new LinkedHashMap<>();
      // Arguments the kernel computes from one column (r + 0.01, see DeviceArg) read that column.
      Map<Expression, List<Optional<DeviceArg>>> deviceArgs = new LinkedHashMap<>();
      for (Map.Entry<Expression, ScalaUDF> entry : ready.entrySet()) {
        deviceArgs.put(entry.getKey(), deviceArgs(entry.getValue(), decisions.get(entry.getKey()), childOutput));
      }
      for (Map.Entry<Expression, ScalaUDF> entry : ready.entrySet()) {
        List<Expression> callArgs = Scala.list(entry.getValue().children());
        for (int i = 0; i < callArgs.size(); i++) {
          Expression arg = callArgs.get(i);
          Expression value = argValue(arg, guards.get(entry.getKey()));
          if (!(arg instanceof Attribute) && deviceArgs.get(entry.getKey()).get(i).isEmpty()
              && !argColumns.containsKey(value.canonicalized())) {
            Alias alias = CallSites.alias(value, "vk_arg" + argColumns.size());
            preProject.add(alias);
            argColumns.put(value.canonicalized(), alias.toAttribute());
          }
        }
      }
      if (!preProject.isEmpty()) {
        Set<ExprId> used = new HashSet<>();
        keep.forEach(a -> used.add(a.exprId()));
        rewritten.forEach(e -> addReferences(e, used));
        for (Map.Entry<Expression, ScalaUDF> entry : ready.entrySet()) {
          Scala.list(entry.getValue().children()).stream().filter(a -> a instanceof Attribute)
              .forEach(a -> used.add(((Attribute) a).exprId()));
          deviceArgs.get(entry.getKey()).forEach(a -> a.filter(d -> d.column() != null).ifPresent(d -> used.add(d.column().exprId())));
          addReferences(guards.get(entry.getKey()), used);
        }
        List<NamedExpression> list = new ArrayList<>();
        childOutput.stream().filter(a -> used.contains(a.exprId())).forEach(list::add);
        list.addAll(preProject);
        child = new ProjectExec(Scala.seq(list), child);
        childOutput = new ArrayList<>(Scala.list(child.output()));
      }
      List<GpuUdfCall> calls = new ArrayList<>();
      for (Map.Entry<Expression, ScalaUDF> entry : ready.entrySet()) {
        // A call an earlier pass counted as a leftover: the node counts its own rows.
        ScalaUDF u = OutsideNodeCalls.uncounted(entry.getValue());
        List<Expression> args = Scala.list(u.children());
        List<Integer> ordinals = new ArrayList<>();
        List<Expression> bound = new ArrayList<>();
        List<Optional<DeviceArg>> computed = deviceArgs.get(entry.getKey());
        for (int i = 0; i < args.size(); i++) {
          Expression arg = args.get(i);
          if (computed.get(i).isPresent()) { // the call() path evaluates the expression itself, over the column
            Attribute column = computed.get(i).get().column();
            ordinals.add(column == null ? -1 : indexOf(childOutput, column)); // a constant reads no column
            bound.add(bind(arg, childOutput));
            continue;
          }
          Attribute column = arg instanceof Attribute a ? a
              : argColumns.get(argValue(arg, guards.get(entry.getKey())).canonicalized());
          ordinals.add(indexOf(childOutput, column));
          bound.add(new BoundReference(ordinals.get(i), column.dataType(), column.nullable()));
        }
        GpuPlanner.Decision d = decisions.get(entry.getKey());
        ColumnKernel kernel = computed.stream().anyMatch(Optional::isPresent)
            ? CompiledKernels.compile(d.kernel().spec().withArgOps(computed.stream()
                .map(a -> a.map(DeviceArg::ops).orElse(ArgOps.NONE)).toList()), planner.conf())
            : d.kernel();
        String name = GpuPlanner.name(u);
        AttributeReference result = results.get(entry.getKey());
        Expression boundCpu = u.withNewChildren(Scala.seq(bound));
        Expression guard = bind(guards.get(entry.getKey()), childOutput);
        GpuUdfCall call = new GpuUdfCall(name, u, boundCpu, kernel, ordinals, result, d.placement(), guard, d.kind());
        calls.add(call);
      }
      child = new VkGpuEvalExec(Scala.seq(calls), planner.conf(), child);
      exprs = rewritten;
    }
  }

  /**
   * {@code exprs} with each null-strict GPU UDF call that has a null constant argument replaced by a
   * null literal: it is null for every row, as vkspark's strict calls are (a translated UDF whose
   * {@code call()} may answer a null keeps its call, and sees the null).
   */
  private List<Expression> nullCalls(List<Expression> exprs, Map<Expression, GpuPlanner.Decision> decisions,
                                     GpuPlanner planner) {
    Map<Expression, CallSites.Site> sites = sites(exprs);
    List<Expression> out = new ArrayList<>();
    for (Expression e : exprs) {
      out.add(e.transformUp(new AbstractPartialFunction<Expression, Expression>() {
        @Override
        public boolean isDefinedAt(Expression x) {
          return x instanceof ScalaUDF u && Scala.list(u.children()).stream().anyMatch(DeviceArg::nullConstant)
              && !(planner.udf(u).orElse(null) instanceof TranslatedUdf t && !t.strict())
              && extractable(u, sites, decisions, planner);
        }

        @Override
        public Expression apply(Expression x) {
          return Literal.create(null, x.dataType());
        }
      }));
    }
    return out;
  }

  /**
   * What the projection under the node computes for argument {@code arg} of a call evaluated under
   * {@code guard}: the argument itself, or {@code IF(guard, arg, NULL)}, so that a computed argument
   * (an implicit cast, {@code i div z}, {@code g(x) + 1}) is evaluated only for the rows Spark
   * evaluates the call for, and cannot fail where the query would not.
   */
  private static Expression argValue(Expression arg, Expression guard) {
    if (guard == null || arg instanceof Attribute || arg instanceof Literal) {
      return arg;
    }
    return new If(guard, arg,
        Literal.create(null, arg.dataType()));
  }

  /** Adds the expression ids of the columns {@code e} reads (none for null). */
  private static void addReferences(Expression e, Set<ExprId> into) {
    if (e != null) {
      Scala.list(e.references().toSeq()).forEach(a -> into.add(a.exprId()));
    }
  }

  /**
   * For each argument of {@code u}: the {@link DeviceArg} its kernel computes on the device from a
   * column of {@code childOutput} ({@code r + 0.01}), or empty for an argument that is a column or
   * goes into the projection below the node. None without a compiled kernel.
   */
  private static List<Optional<DeviceArg>> deviceArgs(ScalaUDF u, GpuPlanner.Decision d, List<Attribute> childOutput) {
    List<Expression> args = Scala.list(u.children());
    List<Optional<DeviceArg>> out = new ArrayList<>();
    for (int i = 0; i < args.size(); i++) {
      SqlType type = d != null && d.kernel() != null ? d.kernel().signature().args().get(i).type() : null;
      Optional<DeviceArg> constant = type == null ? Optional.empty() : DeviceArg.constant(args.get(i), type);
      out.add(constant.isPresent() ? constant : type == SqlType.DOUBLE ? DeviceArg.of(args.get(i))
          .filter(a -> childOutput.stream().anyMatch(c -> c.exprId().equals(a.column().exprId()))) : Optional.empty());
    }
    return out;
  }

  /**
   * {@code e} with each column replaced by its ordinal in {@code output} (null stays null); a column
   * not in {@code output} is a planner bug (IllegalStateException).
   */
  public static Expression bind(Expression e, List<Attribute> output) {
    if (e == null) {
      return null;
    }
    return e.transformUp(new AbstractPartialFunction<Expression, Expression>() {
      @Override
      public boolean isDefinedAt(Expression x) {
        return x instanceof Attribute;
      }

      @Override
      public Expression apply(Expression x) {
        Attribute a = (Attribute) x;
        return new BoundReference(indexOf(output, a), a.dataType(), a.nullable());
      }
    });
  }

  /**
   * A guard can be evaluated by the node once the GPU UDF calls in it have become columns (they
   * are extracted first; the call waits a round) and when evaluating it again gives what Spark
   * saw (deterministic).
   */
  private boolean guardReady(Expression guard, Map<Expression, CallSites.Site> sites,
                             Map<Expression, GpuPlanner.Decision> decisions, GpuPlanner planner) {
    return guard == null || (guard.deterministic()
        && guard.find(x -> x instanceof PlanExpression<?>).isEmpty()
        && guard.find(x -> x instanceof ScalaUDF v && extractable(v, sites, decisions, planner)).isEmpty());
  }

  private static int indexOf(List<Attribute> output, Attribute a) {
    for (int i = 0; i < output.size(); i++) {
      if (output.get(i).exprId().equals(a.exprId())) {
        return i;
      }
    }
    throw new IllegalStateException("column " + a + " is not in " + output);
  }

  /** The site of each call (by canonical form) over all its occurrences: see {@link CallSites#sites}. */
  private static Map<Expression, CallSites.Site> sites(List<Expression> exprs) {
    return CallSites.sites(exprs);
  }

  /**
   * A call moves into a {@link VkGpuEvalExec} when vkspark runs it (GPU, or CPU inside the node). A
   * conditional call carries its guard: the GPU computes every row (a kernel cannot fail), the CPU
   * only the rows Spark would; its computed arguments are computed under the guard
   * ({@link #argValue}), so they must give what Spark would when evaluated again (deterministic).
   */
  private boolean extractable(ScalaUDF u, Map<Expression, CallSites.Site> sites,
                              Map<Expression, GpuPlanner.Decision> decisions, GpuPlanner planner) {
    Optional<GpuUdf> udf = planner.udf(u);
    if (udf.isEmpty()) {
      return false;
    }
    CallSites.Site site = sites.getOrDefault(u.canonicalized(), CallSites.Site.ALWAYS);
    if (site == CallSites.Site.LAMBDA) {
      return false;
    }
    GpuPlanner.Decision d = decisions.computeIfAbsent(u.canonicalized(), k -> planner.decide(u, udf.get()));
    if (d.leftToSpark()) {
      return false;
    }
    return site == CallSites.Site.ALWAYS || CallSites.guardableArguments(u);
  }

  private boolean hasExtractableBelow(ScalaUDF u, Map<Expression, CallSites.Site> sites,
                                      Map<Expression, GpuPlanner.Decision> decisions, GpuPlanner planner) {
    for (Expression child : Scala.list(u.children())) {
      if (child.find(x -> x instanceof ScalaUDF v && extractable(v, sites, decisions, planner)).isDefined()) {
        return true;
      }
    }
    return false;
  }

  /**
   * Has every call left in Spark's operators count the rows it computes with {@code call()}
   * ({@link OutsideNodeCalls}), then tags each node holding one with where each call runs
   * ({@link Placement}, decided by the leftovers), for EXPLAIN; with fallback off, such a call
   * fails the query instead.
   */
  private SparkPlan countAndTagLeftovers(SparkPlan plan, GpuPlanner planner) {
    SparkPlan counted = plan.transformUp(new AbstractPartialFunction<SparkPlan, SparkPlan>() {
      @Override
      public boolean isDefinedAt(SparkPlan p) {
        return !(p instanceof VkGpuEvalExec || p instanceof LeafExecNode)
            && p.expressions().exists(e -> e.find(x -> x instanceof ScalaUDF u
                && !(u.function() instanceof CountedFunction) && planner.udf(u).isPresent()).isDefined());
      }

      @Override
      public SparkPlan apply(SparkPlan p) {
        return (SparkPlan) p.mapExpressions(new AbstractFunction1<Expression, Expression>() {
          @Override
          public Expression apply(Expression e) {
            return OutsideNodeCalls.counted(e, OutsideNodeCalls.accumulator(session.sparkContext()));
          }
        });
      }
    });
    tagLeftovers(counted, planner);
    return counted;
  }

  /**
   * Tags every node still holding a GPU UDF with where each call runs ({@link Placement}, decided by
   * the leftovers), for EXPLAIN; with fallback off, such a call fails the query instead.
   */
  private void tagLeftovers(SparkPlan plan, GpuPlanner planner) {
    boolean enabled = planner.conf().enabled();
    plan.foreach(node -> {
      // Scans hold pushed-down filters only to prune files and row groups; they evaluate nothing per row.
      if (node instanceof VkGpuEvalExec || node instanceof LeafExecNode) {
        return BoxedUnit.UNIT;
      }
      Set<String> reasons = new LinkedHashSet<>();
      for (Expression e : Scala.list(node.expressions())) {
        CallSites.of(e).forEach((u, site) -> {
          String name = GpuPlanner.name(u);
          GpuUdf udf = planner.udf(u).orElseThrow();
          reasons.add(planner.leftover(u, udf, leftover(node, u, udf, site, enabled, planner)).describe(name)
              + (enabled ? ", outside VkGpuEval (its rows count in the accumulator '" + OutsideNodeCalls.NAME + "')" : ""));
        });
      }
      if (enabled) {
        untranslated(node).forEach((name, refused) -> reasons.add(Placement.cpu(Placement.Cause.NOT_TRANSLATED,
            Placement.DecidedBy.LEFTOVERS, refused.reason()).describe(name) + " (Spark runs it as without vkspark)"));
      }
      if (!reasons.isEmpty()) {
        node.setTagValue(FALLBACK, String.join("; ", reasons));
      }
      return BoxedUnit.UNIT;
    });
  }

  /**
   * The plain Java UDFs called in {@code node} whose {@code call()} does not translate to the GPU
   * (with {@code spark.vkspark.translate} on), by name, with the translator's reason. Spark's plan
   * keeps them as they are; EXPLAIN says why (this tag), and the driver log says it once per method
   * at WARN.
   */
  private static Map<String, Translation.Refused> untranslated(SparkPlan node) {
    Map<String, Translation.Refused> out = new LinkedHashMap<>();
    for (Expression e : Scala.list(node.expressions())) {
      e.foreach(x -> {
        if (x instanceof ScalaUDF u) {
          ScalaUdfs.refusal(u.function()).ifPresent(r -> {
            out.put(GpuPlanner.name(u), r);
            if (WARNED.add(r.source())) {
              LOG.warn("vkspark: {}", Placement.cpu(Placement.Cause.NOT_TRANSLATED, Placement.DecidedBy.LEFTOVERS,
                  r.reason()).describe(GpuPlanner.name(u)));
            }
          });
        }
        return BoxedUnit.UNIT;
      });
    }
    return out;
  }

  /** Java UDF methods whose refusal the log has shown (once per method and JVM). */
  private static final Set<String> WARNED = ConcurrentHashMap.newKeySet();
  private static final Logger LOG = LoggerFactory.getLogger(InsertGpuEval.class);

  /** Why {@code u}, at {@code site} in {@code node}, was not moved into a GPU node. */
  private static Placement leftover(SparkPlan node, ScalaUDF u, GpuUdf udf, CallSites.Site site, boolean enabled,
                                    GpuPlanner planner) {
    if (!enabled) {
      return Placement.cpu(Placement.Cause.DISABLED, Placement.DecidedBy.LEFTOVERS);
    }
    if (!(node instanceof ProjectExec || node instanceof FilterExec)) {
      return Placement.cpu(Placement.Cause.UNPLANNED_OPERATOR, Placement.DecidedBy.LEFTOVERS, node.nodeName());
    }
    GpuPlanner.Decision d = planner.decide(u, udf);
    return d.leftToSpark() ? d.placement() : CallSites.placement(site);
  }
}
