package io.vkspark.spark;

import io.vkspark.spark.udf.ConfiguredUdfs;
import io.vkspark.spark.udf.ScalaUdfs;
import io.vkspark.spark.agg.ExtractGpuUdfFromAggregate;
import io.vkspark.spark.agg.FuseGpuAggregates;
import io.vkspark.spark.glsl.GlslDefinitions;
import io.vkspark.spark.glsl.GlslUdf;
import io.vkspark.spark.api.GpuUdf;
import io.vkspark.spark.plan.ArgumentTypes;
import io.vkspark.spark.plan.InsertGpuEval;
import io.vkspark.spark.cache.ReadCacheColumns;
import io.vkspark.spark.plan.NullCheckedClosures;
import io.vkspark.spark.shim.Scala;
import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.exec.VkRowToColumnarExec;
import io.vkspark.spark.conf.Settings;

import io.vkspark.spark.shim.SparkShim;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.spark.SparkEnv;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.ColumnarRule;
import org.apache.spark.sql.execution.SparkPlan;
import scala.Function1;
import scala.Tuple3;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * vkspark's SQL extensions ({@code spark.sql.extensions}; the plugin adds them): implicit casts and
 * type checks for GPU UDF arguments at analysis, Spark's null checks around translated Scala closures
 * moved into their functions ({@link io.vkspark.spark.plan.NullCheckedClosures}), GPU UDFs pulled out of aggregates before physical
 * planning, the physical rule that plans them onto {@code VkGpuEvalExec} (also as an adaptive
 * query-stage rule, so EXPLAIN shows it before execution), the rule that has CPU operators read
 * vkspark's cache as column batches ({@link ReadCacheColumns}), the rule that bounds the rows turned
 * into columns under a GPU node by bytes ({@link VkRowToColumnarExec}), and the classes listed in
 * {@code spark.vkspark.functions} and the GLSL-only UDFs of the files in {@code spark.vkspark.glsl} as SQL
 * functions of every session, and {@code vkspark_define} to define GLSL-only UDFs in a session.
 */
public final class VkSqlExtensions extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
  @Override
  public BoxedUnit apply(SparkSessionExtensions ext) {
    ext.injectResolutionRule((Function1<SparkSession, Rule<LogicalPlan>>) s -> new ArgumentTypes.CastArguments());
    ext.injectResolutionRule((Function1<SparkSession, Rule<LogicalPlan>>) ArgumentTypes.CheckCalls::new);
    ext.injectCheckRule((Function1<SparkSession, Function1<LogicalPlan, BoxedUnit>>) ArgumentTypes.Check::new);
    ext.injectOptimizerRule((Function1<SparkSession, Rule<LogicalPlan>>) s -> new NullCheckedClosures());
    ext.injectPreCBORule((Function1<SparkSession, Rule<LogicalPlan>>) ExtractGpuUdfFromAggregate::new);
    ext.injectQueryStagePrepRule((Function1<SparkSession, Rule<SparkPlan>>) InsertGpuEval::new);
    ext.injectQueryStagePrepRule((Function1<SparkSession, Rule<SparkPlan>>) s -> new FuseGpuAggregates(s, false));
    ext.injectColumnar((Function1<SparkSession, ColumnarRule>) s -> new ColumnarRule() {
      @Override
      public Rule<SparkPlan> preColumnarTransitions() {
        return new InsertGpuEval(s);
      }

      @Override
      public Rule<SparkPlan> postColumnarTransitions() {
        return new FuseGpuAggregates(s, true);
      }
    });
    ext.injectColumnar((Function1<SparkSession, ColumnarRule>) s -> new ColumnarRule() {
      @Override
      public Rule<SparkPlan> postColumnarTransitions() {
        return new ReadCacheColumns();
      }
    });
    ext.injectColumnar((Function1<SparkSession, ColumnarRule>) s -> new ColumnarRule() {
      @Override
      public Rule<SparkPlan> postColumnarTransitions() {
        return new Rule<SparkPlan>() {
          @Override
          public SparkPlan apply(SparkPlan plan) {
            return VkRowToColumnarExec.bound(plan);
          }
        };
      }
    });
    ext.injectFunction(new Tuple3<>(new FunctionIdentifier(GlslDefinitions.DEFINE),
        new ExpressionInfo(GlslDefinitions.class.getName(), null, GlslDefinitions.DEFINE,
            "vkspark_define(definition) or vkspark_define(signature, body): defines GLSL-only GPU UDFs in this "
                + "session, e.g. vkspark_define('double poly(double x) { return 1.0 + x * x; }'); returns their signatures",
            "", "", "", "", "", "", "scala_udf"),
        Scala.functionBuilder(GlslDefinitions::define)));
    SparkEnv env = SparkEnv.get();
    if (env != null) {
      VkConf conf = VkConf.from(env.conf());
      Map<String, String> origins = new LinkedHashMap<>();
      for (GpuUdf udf : ConfiguredUdfs.configured(conf, Thread.currentThread().getContextClassLoader())) {
        inject(ext, udf, udf.getClass().getName());
        origins.put(udf.name(), "class " + udf.getClass().getName() + " in " + Settings.FUNCTIONS.key());
      }
      for (ConfiguredUdfs.JavaFunction f : ConfiguredUdfs.javaFunctions(conf, Thread.currentThread().getContextClassLoader())) {
        Object function = SparkShim.javaUdfFunction(f.udf(), f.arity()); // one per function, as above
        ext.injectFunction(new Tuple3<>(new FunctionIdentifier(f.name()),
            new ExpressionInfo(f.udf().getClass().getName(), null, f.name(), "Java UDF " + f.name(), "", "", "", "", "",
                "", "scala_udf"),
            Scala.functionBuilder(children -> ScalaUdfs.javaCall(f.name(), function, f.arity(), f.result(), children))));
        origins.put(f.name(), "class " + f.udf().getClass().getName() + " in " + Settings.FUNCTIONS.key());
      }
      for (GlslUdf udf : GlslDefinitions.configured(conf)) {
        inject(ext, udf, GlslUdf.class.getName());
        origins.put(udf.name(), udf.origin());
      }
      GlslDefinitions.recordAppWide(env.conf().get("spark.app.id", ""), origins);
    }
    return BoxedUnit.UNIT;
  }

  /** Registers {@code udf} as a SQL function of every session these extensions build. */
  private static void inject(SparkSessionExtensions ext, GpuUdf udf, String className) {
    String name = udf.name();
    // One Scala function for every call: ScalaUDF compares functions by identity, and GROUP BY f(a)
    // must find the same f(a) in the grouping and the select list.
    Object function = ScalaUdfs.scalaFunction(name, udf);
    ext.injectFunction(new Tuple3<>(new FunctionIdentifier(name),
        new ExpressionInfo(className, null, name, "GPU UDF " + name + udf.kernel(), "", "", "", "", "", "", "scala_udf"),
        Scala.functionBuilder(children -> ScalaUdfs.call(name, udf, function, children))));
  }
}
