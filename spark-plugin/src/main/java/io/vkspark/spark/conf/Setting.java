package io.vkspark.spark.conf;

import io.vkspark.gpu.DeviceOptions;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import java.io.File;
import java.io.Serializable;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.spark.network.util.JavaUtils;

/**
 * One {@code spark.vkspark.*} setting as {@link Settings} declares it: key, type, default, bounds,
 * whether a session may change it, and the sentence the README shows. Parsing and the error for a
 * bad value come from the declaration, so a key reads the same wherever it is used, and a value
 * that is not what the type allows fails naming the key, the value and what to write (never a
 * silent default, as {@code Boolean.parseBoolean} gave for a typo).
 *
 * @param <T> the parsed value's type
 */
public sealed interface Setting<T>
    permits Setting.Flag, Setting.Whole, Setting.Fraction, Setting.Size, Setting.Share, Setting.Time,
        Setting.Choice, Setting.Text, Setting.Names, Setting.Dir {

  /** Whether a session's SET changes the setting, as the README's "(per session)" or "(static)" says. */
  public enum Scope {
    /** read from the session's conf: {@code spark.conf().set} changes it for that session */
    SESSION("per session"),
    /** read from the application's conf only, so a shared server's administrator can rely on it */
    STATIC("static");

    private final String words;

    Scope(String words) {
      this.words = words;
    }

    /** How the README's table says it. */
    public String words() {
      return words;
    }
  }

  /**
   * What every kind declares.
   *
   * @param key the full key, {@code spark.vkspark....}
   * @param scope whether a session may change it
   * @param defaultText the default as a user would write it (parsed like a set value); null: no
   *     default, the setting is meaningful unset ({@link #find})
   * @param shownDefault the README's default cell, when it is not {@code `defaultText`}
   * @param doc the README's meaning cell, without the scope
   */
  public record Info(String key, Scope scope, String defaultText, String shownDefault, String doc) {
    public Info {
      if (!key.startsWith(Settings.PREFIX) || doc.isBlank()) {
        throw new IllegalArgumentException("a setting needs a " + Settings.PREFIX + " key and a doc: " + key);
      }
    }

    /** The README's default cell. */
    public String shown() {
      return shownDefault != null ? shownDefault : "`" + defaultText + "`";
    }
  }

  Info info();

  /**
   * The value of {@code text} (a value the user set; untrimmed).
   *
   * @throws GpuException INVALID_ARGUMENT naming the key and the value, with a Fix
   */
  T parse(String text);

  default String key() {
    return info().key();
  }

  default boolean isStatic() {
    return info().scope() == Scope.STATIC;
  }

  /** The value when unset. */
  default T defaultValue() {
    if (info().defaultText() == null) {
      throw new IllegalStateException(key() + " has no default: read it with find()");
    }
    return parse(info().defaultText());
  }

  /** The value set in {@code lookup} (null for unset), parsed, or empty when unset. */
  default Optional<T> find(Function<String, String> lookup) {
    String v = lookup.apply(key());
    return v == null ? Optional.empty() : Optional.of(parse(v));
  }

  /** The value set in {@code lookup} (null for unset), or the default. */
  default T get(Function<String, String> lookup) {
    String v = lookup.apply(key());
    return v == null ? defaultValue() : parse(v);
  }

  private static GpuException bad(String key, String text, String problem, String fix) {
    return GpuException.of(Code.INVALID_ARGUMENT, key + " is '" + text + "'" + problem, "set " + key + " to " + fix);
  }

  /** {@code true} or {@code false}, any case, nothing else. */
  public record Flag(Info info) implements Setting<Boolean> {
    @Override
    public Boolean parse(String text) {
      return switch (text.trim().toLowerCase(Locale.ROOT)) {
        case "true" -> true;
        case "false" -> false;
        default -> throw bad(key(), text, ", not a boolean.",
            "true or false" + (info.defaultText() == null ? ", or leave it unset." : "."));
      };
    }
  }

  /**
   * A whole number from {@code min} to {@code max} ({@code _} between digits allowed).
   *
   * @param what the Fix's words after "set KEY to", e.g. "the number of rows per GPU batch, e.g. 1048576"
   */
  public record Whole(Info info, int min, int max, String what) implements Setting<Integer> {
    @Override
    public Integer parse(String text) {
      try {
        int n = Integer.parseInt(text.trim().replace("_", ""));
        if (n >= min && n <= max) {
          return n;
        }
      } catch (NumberFormatException e) {
        // reported below
      }
      throw bad(key(), text, min == 1 && max == Integer.MAX_VALUE ? ", not a positive whole number."
          : ", not a whole number from " + min + " to " + max + ".", what + ".");
    }
  }

  /**
   * A number in (0, 1].
   *
   * @param what the Fix's words after "set KEY to"
   */
  public record Fraction(Info info, String what) implements Setting<Double> {
    @Override
    public Double parse(String text) {
      double d;
      try {
        d = Double.parseDouble(text.trim());
      } catch (NumberFormatException e) {
        d = Double.NaN;
      }
      if (!(d > 0 && d <= 1)) {
        throw bad(key(), text, ", not a fraction in (0, 1].", what + ".");
      }
      return d;
    }
  }

  /**
   * A size in bytes, read by Spark's own parser ({@code JavaUtils.byteStringAsBytes}: a number with
   * an optional b, k, m, g, t or p suffix, powers of 1024, {@code b} after the letter allowed), so
   * it reads as Spark's own sizes do. Before that, {@code _} between digits, blanks before the
   * suffix and an {@code i} in {@code KiB} to {@code PiB} are dropped: vkspark accepted those
   * before, and Spark 3.5 rejects {@code GiB} where 4.2 accepts it. A blank value is the default.
   *
   * @param min the smallest size allowed: 0 where 0 means "no limit", else 1
   * @param example a value for the Fix, e.g. {@code 4g}
   */
  public record Size(Info info, long min, String example) implements Setting<Long> {
    @Override
    public Long parse(String text) {
      if (text.isBlank()) {
        return defaultValue();
      }
      String spark = text.trim().toLowerCase(Locale.ROOT).replace("_", "").replaceAll("\\s+", "")
          .replaceAll("^([0-9]+[kmgtp])ib$", "$1b");
      long n = -1;
      try {
        n = JavaUtils.byteStringAsBytes(spark);
      } catch (IllegalArgumentException e) { // NumberFormatException included: reported below
        n = -1;
      }
      if (n < min) {
        throw bad(key(), text, min > 0 ? ", not a positive size." : ", not a size.",
            "a number of bytes with an optional k, m, g or t suffix, e.g. " + example
                + (min == 0 ? " (0 for no limit)." : "."));
      }
      return n;
    }
  }

  /**
   * An amount of a device's memory: a size as {@link Size} reads it ({@code 8g}), or a fraction of
   * the device's memory in (0, 1] ({@code 0.25}), which only the executor that opened the device can
   * turn into bytes ({@link Amount#of}).
   *
   * @param example a value for the Fix, e.g. {@code 8g}
   */
  public record Share(Info info, String example) implements Setting<Share.Amount> {
    /** Bytes (when {@code fraction} is 0) or a fraction of the device's memory. */
    public record Amount(long bytes, double fraction) implements Serializable {
      /** The bytes this amount is of a device with {@code deviceBytes} of memory (at least 1). */
      public long of(long deviceBytes) {
        return Math.max(1, fraction > 0 ? (long) (fraction * deviceBytes) : bytes);
      }
    }

    @Override
    public Amount parse(String text) {
      String v = text.trim();
      if (v.matches("[0-9]*\\.[0-9]+|1|0")) {
        double d = Double.parseDouble(v);
        if (d > 0 && d <= 1) {
          return new Amount(0, d);
        }
      } else if (!v.isBlank()) {
        try {
          return new Amount(new Size(info, 1, example).parse(v), 0);
        } catch (GpuException e) {
          // reported below
        }
      }
      throw bad(key(), text, ", neither a size nor a fraction in (0, 1].", "a size such as " + example
          + ", or a fraction of the device's memory such as 0.25.");
    }
  }

  /**
   * A duration as Spark writes them ({@code 60s}, {@code 500ms}, {@code 2min}, {@code 1h}; a bare
   * number is seconds), 0 for no limit; a blank value is the default.
   */
  public record Time(Info info) implements Setting<Duration> {
    @Override
    public Duration parse(String text) {
      if (text.isBlank()) {
        return defaultValue();
      }
      String v = text.trim();
      try {
        long ms = JavaUtils.timeStringAsMs(v.matches("\\d+") ? v + "s" : v);
        if (ms >= 0) {
          return Duration.ofMillis(ms);
        }
      } catch (NumberFormatException e) {
        // reported below
      }
      throw bad(key(), text, ", not a duration.", "a duration such as 60s, 500ms or 2min (0 for no limit).");
    }
  }

  /**
   * One word of a closed list, any case.
   *
   * @param options the words in the order the error lists them
   * @param aliases other words accepted, not advertised (e.g. {@code false} for {@code off})
   */
  public record Choice<E>(Info info, List<Option<E>> options, Map<String, E> aliases) implements Setting<E> {
    /** A word, its value, and what it means in the Fix (may be empty). */
    public record Option<E>(String word, E value, String meaning) {}

    public Choice {
      options = List.copyOf(options);
      aliases = Map.copyOf(aliases);
    }

    @Override
    public E parse(String text) {
      String v = text.trim().toLowerCase(Locale.ROOT);
      for (Option<E> o : options) {
        if (o.word().equals(v)) {
          return o.value();
        }
      }
      if (aliases.containsKey(v)) {
        return aliases.get(v);
      }
      throw bad(key(), text, ", not " + or(options.stream().map(Option::word).toList()) + ".",
          or(options.stream().map(o -> o.meaning().isEmpty() ? o.word() : o.word() + " (" + o.meaning() + ")")
              .toList()) + ".");
    }

    private static String or(List<String> words) {
      return words.size() == 1 ? words.get(0)
          : String.join(", ", words.subList(0, words.size() - 1)) + " or " + words.get(words.size() - 1);
    }
  }

  /** Free text, trimmed. */
  public record Text(Info info) implements Setting<String> {
    @Override
    public String parse(String text) {
      return text.trim();
    }
  }

  /** A comma-separated list, each item trimmed, empty items dropped. */
  public record Names(Info info) implements Setting<List<String>> {
    @Override
    public List<String> parse(String text) {
      return Arrays.stream(text.split(",")).map(String::trim).filter(s -> !s.isEmpty())
          .collect(Collectors.toUnmodifiableList());
    }
  }

  /**
   * A directory: {@code ~} and {@code ~/} expanded to the user's home; {@code none} and blank kept
   * (they switch the feature off). The default is {@link io.vkspark.gpu.DeviceOptions#defaultCacheDir},
   * which follows {@code XDG_CACHE_HOME}, so it is computed, not parsed from {@code defaultText}.
   */
  public record Dir(Info info) implements Setting<String> {
    @Override
    public String defaultValue() {
      return DeviceOptions.defaultCacheDir().toString();
    }

    @Override
    public String parse(String text) {
      String v = text.trim();
      if (v.isBlank() || v.equalsIgnoreCase("none")) {
        return v;
      }
      String expanded = expandHome(v);
      if (v.startsWith("~") && expanded.equals(v)) {
        throw GpuException.of(Code.INVALID_ARGUMENT, key() + " is '" + v + "': vkspark expands only ~ and ~/ to the "
            + "home directory, not ~user.", "set " + key() + " to an absolute path or one starting with ~/.");
      }
      try {
        Path.of(expanded);
      } catch (InvalidPathException e) {
        throw bad(key(), v, ", not a valid path (" + e.getReason() + ").", "a directory path, or none to switch it off.");
      }
      return expanded;
    }

    /**
     * {@code ~} and {@code ~/...} (or {@code ~\...}) with the user's home directory, as a shell
     * would: Java does not, and a folder literally named {@code ~} is never what a user meant.
     * {@code ~user/...} is not expanded (it is rejected where a path is read).
     */
    static String expandHome(String path) {
      if (path.equals("~")) {
        return System.getProperty("user.home");
      }
      if (path.startsWith("~/") || path.startsWith("~" + File.separator)) {
        return Path.of(System.getProperty("user.home")).resolve(path.substring(2)).toString();
      }
      return path;
    }
  }
}
