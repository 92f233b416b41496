package io.vkspark.spark;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * A Spark Connect JVM client session, for {@link SparkConnectTest}. The test loads this class in
 * the client's own class loader (the client jar repackages Spark's API, which clashes with the
 * server's Spark on one class path) and talks to it through JDK types only: SQL in, rows as
 * strings out, and the client's own exception thrown as is. The calls go through reflection
 * because the test sources compile against the server's Spark, not the client's.
 */
public final class ConnectClientSession implements Function<String, List<String>>, AutoCloseable {
  private final Object session;
  private final Method sql;
  private final Method collect;
  private final Method close;

  /** Connects to {@code url} ({@code sc://host:port}) as {@code SparkSession.builder().remote(url).getOrCreate()}. */
  public ConnectClientSession(String url) throws ReflectiveOperationException {
    ClassLoader loader = ConnectClientSession.class.getClassLoader();
    Class<?> sparkSession = Class.forName("org.apache.spark.sql.SparkSession", true, loader);
    Method builder = sparkSession.getMethod("builder");
    Object b = builder.invoke(null);
    b = builder.getReturnType().getMethod("remote", String.class).invoke(b, url);
    session = builder.getReturnType().getMethod("getOrCreate").invoke(b);
    sql = sparkSession.getMethod("sql", String.class);
    collect = sql.getReturnType().getMethod("collectAsList");
    close = sparkSession.getMethod("close");
  }

  /** The rows of {@code query}, each as the client's {@code Row.toString()}; the client's exception when it fails. */
  @Override
  public List<String> apply(String query) {
    Object df = call(sql, session, query);
    List<String> rows = new ArrayList<>();
    for (Object row : (List<?>) call(collect, df)) {
      rows.add(String.valueOf(row));
    }
    return rows;
  }

  @Override
  public void close() {
    call(close, session);
  }

  private static Object call(Method m, Object target, Object... args) {
    try {
      return m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw ConnectClientSession.<RuntimeException>sneaky(e.getCause());
    } catch (IllegalAccessException e) {
      throw new IllegalStateException(e);
    }
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> T sneaky(Throwable t) throws T {
    throw (T) t;
  }
}
