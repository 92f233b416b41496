package io.vkspark.gpu.translate;

import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.column.ColumnGpu;
import io.vkspark.gpu.column.CpuCause;
import io.vkspark.gpu.column.SqlType;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 32's Done-when case in gpu-core: the plain Java lambda
 * {@code (String email) -> email.substring(email.indexOf('@') + 1).toLowerCase()} translates and
 * gives Java's string for every row: ASCII rows on the GPU, non-ASCII and ill-formed rows (U+FFFD
 * for {@code call()}) handed back and counted as not ASCII, null rows computed by {@code call()}
 * (which throws, as in Spark) or, for the null-safe form, null on the device; very long rows too.
 */
final class EmailDomainTest {
  @RegisterExtension
  static final ColumnGpu GPU = new ColumnGpu();

  /** Spark's {@code UDF1} without Spark: a serializable functional interface, as javac compiles a lambda of it. */
  interface Udf1<A, R> extends java.io.Serializable {
    R call(A a) throws Exception;
  }

  static List<Object[]> emails(int n, Random r) {
    String[] users = {"ann", "Bob.Smith", "x", "", "o'hara", "a+b", "MIXED_Case", "42"};
    String[] domains = {"Example.COM", "mail.example.org", "X.io", "", "sub.Domain.net", "localhost", "a@b"};
    String[] other = {"jörg@Bücher.de", "名前@例え.jp", "🎉@party.COM", "user@DOMAIN.İT", "ÅSA@X.SE", "no-at-sign", "@",
        "@@", "trailing@", "@Leading"};
    List<Object[]> rows = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int kind = r.nextInt(20);
      Object v;
      if (kind == 0) {
        v = null;
      } else if (kind == 1) {
        v = new byte[] {'u', (byte) 0xE9, '@', 'X', (byte) 0x80, '.', 'C', 'O', 'M'}; // ill-formed Latin-1 bytes
      } else if (kind < 5) {
        v = other[r.nextInt(other.length)].getBytes(StandardCharsets.UTF_8);
      } else {
        v = (users[r.nextInt(users.length)] + "@" + domains[r.nextInt(domains.length)]).getBytes(StandardCharsets.UTF_8);
      }
      rows.add(new Object[] {v});
    }
    // very long rows: an ASCII one on the GPU, a non-ASCII one handed back
    rows.add(new Object[] {("u".repeat(3000) + "@" + "Sub.".repeat(2000) + "COM").getBytes(StandardCharsets.UTF_8)});
    rows.add(new Object[] {("ü".repeat(2000) + "@X.COM").getBytes(StandardCharsets.UTF_8)});
    return rows;
  }

  private static StringRows.Java java(Udf1<String, String> f) {
    return args -> {
      try {
        return f.call((String) args[0]);
      } catch (Exception e) {
        return StringRows.THROWS;
      }
    };
  }

  private static long nonAscii(List<Object[]> rows) {
    return rows.stream().filter(r -> r[0] != null
        && !new String((byte[]) r[0], StandardCharsets.UTF_8).chars().allMatch(c -> c < 128)).count();
  }

  @Test
  void emailDomain_plainJavaLambda_givesJavasStringForEveryRow() {
    assertFalse(Set.of("tr", "az", "lt").contains(Locale.getDefault().getLanguage()), "the test JVM's locale maps i as ASCII");
    Udf1<String, String> domain = email -> email.substring(email.indexOf('@') + 1).toLowerCase();
    Translation t = JavaTranslator.translate(domain);
    Translation.Translated tr = assertInstanceOf(Translation.Translated.class, t, t.toString());
    assertEquals(List.of(SqlType.STRING), tr.args());
    assertEquals(SqlType.STRING, tr.result());
    assertTrue(tr.exact());
    assertFalse(tr.strict(), "email.substring on a null email throws: call() computes null rows");
    List<Object[]> rows = emails(2000, new Random(32));
    StringRows check = new StringRows(GPU.runtime(), GPU.allocator());
    try {
      StringRows.Seen seen = check.check("domain", java(domain), List.of(SqlType.STRING), tr, rows);
      long nulls = rows.stream().filter(r -> r[0] == null).count();
      assertEquals(nulls, seen.nullRows());
      assertEquals(nonAscii(rows), seen.handedBack(), "exactly the rows that are not ASCII go to call()");
      assertEquals(seen.handedBack(), seen.cause(CpuCause.NON_ASCII));
      assertEquals(rows.size() - nulls - seen.handedBack(), seen.gpuRows());
      assertTrue(seen.gpuRows() > 1400 && seen.handedBack() > 200, seen.toString());
    } finally {
      check.close();
    }
  }

  @Test
  void emailDomain_nullSafe_isNullStrict_nullRowsNullOnTheDevice() {
    Udf1<String, String> domain = email -> email == null ? null : email.substring(email.indexOf('@') + 1).toLowerCase();
    Translation.Translated tr = (Translation.Translated) JavaTranslator.translate(domain);
    assertTrue(tr.strict(), "a null email gives null");
    List<Object[]> rows = emails(500, new Random(33));
    StringRows check = new StringRows(GPU.runtime(), GPU.allocator());
    try {
      StringRows.Seen seen = check.check("domain_or_null", java(domain), List.of(SqlType.STRING), tr, rows);
      assertEquals(0, seen.nullRows(), "strict: null rows run on the device, null without the kernel");
      assertEquals(nonAscii(rows), seen.handedBack());
    } finally {
      check.close();
    }
  }
}
