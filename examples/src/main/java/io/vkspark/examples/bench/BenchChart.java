package io.vkspark.examples.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;

/**
 * Draws the Spark benchmark's JSON lines as a bar chart (PNG): for each case, the median time of
 * the GPU UDF, Spark built-in SQL and the Java UDF on a log scale, with the speed-up of the GPU
 * UDF written above its bar.
 *
 * <pre>BenchChart TITLE OUT.png RESULTS.json [MORE.json ...]</pre>
 */
public final class BenchChart {
  private static final Pattern FIELD = Pattern.compile("\"(case|variant|device|median_s|rows)\": \"?([^\",}]*)\"?");
  private static final Map<String, Color> COLORS = Map.of(
      "gpu_udf", new Color(0x2e7d32), "spark_sql", new Color(0x1565c0), "java_udf", new Color(0xef6c00));

  private BenchChart() {}

  public static void main(String[] args) throws IOException {
    String title = args[0];
    Map<String, Map<String, Double>> cases = new LinkedHashMap<>();
    String device = "";
    Map<String, Long> rows = new LinkedHashMap<>();
    for (int i = 2; i < args.length; i++) {
      for (String line : Files.readAllLines(Path.of(args[i]))) {
        if (!line.contains("\"bench\": \"spark\"")) {
          continue;
        }
        Map<String, String> f = new LinkedHashMap<>();
        Matcher m = FIELD.matcher(line);
        while (m.find()) {
          f.putIfAbsent(m.group(1), m.group(2));
        }
        if (f.get("case").equals("scan_floor")) {
          continue;
        }
        cases.computeIfAbsent(f.get("case"), k -> new LinkedHashMap<>()).put(f.get("variant"), Double.parseDouble(f.get("median_s")));
        device = f.get("device");
        rows.put(f.get("case"), Long.parseLong(f.get("rows")));
      }
    }
    int width = Math.max(240 * Math.max(1, cases.size()) + 140, 9 * title.length() + 40);
    int height = 520;
    BufferedImage img = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = img.createGraphics();
    g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
    g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
    g.setColor(Color.WHITE);
    g.fillRect(0, 0, width, height);
    g.setColor(Color.BLACK);
    g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
    g.drawString(title, 20, 28);
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    g.drawString("median seconds of a query summing the UDF over a cached DataFrame (log scale, lower is better); device: "
        + device, 20, 48);

    double min = cases.values().stream().flatMap(m -> m.values().stream()).mapToDouble(Double::doubleValue).min().orElse(0.01);
    double max = cases.values().stream().flatMap(m -> m.values().stream()).mapToDouble(Double::doubleValue).max().orElse(1);
    double lo = Math.floor(Math.log10(min));
    double hi = Math.ceil(Math.log10(max));
    if (hi <= lo) {
      hi = lo + 1;
    }
    int top = 80;
    int bottom = height - 70;
    int left = 70;
    g.setStroke(new BasicStroke(1));
    for (double e = lo; e <= hi; e++) {
      int y = (int) (bottom - (e - lo) / (hi - lo) * (bottom - top));
      g.setColor(new Color(0xdddddd));
      g.drawLine(left, y, width - 20, y);
      g.setColor(Color.DARK_GRAY);
      g.drawString(Math.pow(10, e) >= 1 ? String.format(Locale.ROOT, "%.0f s", Math.pow(10, e))
          : String.format(Locale.ROOT, "%s s", Double.toString(Math.pow(10, e))), 8, y + 4);
    }
    int x = left + 20;
    for (Map.Entry<String, Map<String, Double>> c : cases.entrySet()) {
      List<String> variants = new ArrayList<>(List.of("gpu_udf", "spark_sql", "java_udf"));
      variants.removeIf(v -> !c.getValue().containsKey(v));
      Double gpu = c.getValue().get("gpu_udf");
      for (String v : variants) {
        double t = c.getValue().get(v);
        int y = (int) (bottom - (Math.log10(t) - lo) / (hi - lo) * (bottom - top));
        g.setColor(COLORS.getOrDefault(v, Color.GRAY));
        g.fillRect(x, y, 56, bottom - y);
        g.setColor(Color.BLACK);
        g.drawString(String.format(Locale.ROOT, "%.3g s", t), x, y - 4);
        if (!v.equals("gpu_udf") && gpu != null) {
          g.drawString(String.format(Locale.ROOT, "GPU %.1fx", t / gpu), x, y - 18);
        }
        x += 62;
      }
      g.setColor(Color.BLACK);
      g.drawString(c.getKey(), x - 62 * variants.size(), bottom + 18);
      g.drawString(String.format(Locale.ROOT, "%,d rows", rows.get(c.getKey())), x - 62 * variants.size(), bottom + 34);
      x += 50;
    }
    int lx = 20;
    for (String v : List.of("gpu_udf", "spark_sql", "java_udf")) {
      g.setColor(COLORS.get(v));
      g.fillRect(lx, height - 30, 14, 14);
      g.setColor(Color.BLACK);
      g.drawString(switch (v) {
        case "gpu_udf" -> "GPU UDF (vkspark)";
        case "spark_sql" -> "Spark built-in SQL";
        default -> "Java UDF";
      }, lx + 20, height - 18);
      lx += 170;
    }
    g.dispose();
    Path out = Path.of(args[1]);
    if (out.getParent() != null) {
      Files.createDirectories(out.getParent());
    }
    ImageIO.write(img, "png", out.toFile());
    System.out.println("wrote " + out);
  }
}
