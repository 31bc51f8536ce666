package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Reads what {@code benchmarks/run.sh} measured (JMH CSV files, the Redis command counts printed by the Redis
 * benchmark, the HTTP load results) and prints one Markdown report: the figures, the ratios ours / peer and
 * ours / floor, and each target of the performance issue with whether this run met it.
 * <p>
 * {@snippet lang = "shell" :
 * java -cp benchmarks/target/benchmarks.jar io.github.ratelimit.benchmarks.Report benchmarks/results
 * }
 */
public final class Report {

	private static final String OURS = "ratelimit-fixed";

	private final List<Row> rows = new ArrayList<>();

	private final Map<String, String> commands = new LinkedHashMap<>();

	private final Map<String, List<HttpLoad.Result>> httpRounds = new LinkedHashMap<>();

	private final Map<String, HttpLoad.Result> http = new LinkedHashMap<>();

	private final List<String> targets = new ArrayList<>();

	public static void main(String[] args) throws IOException {
		Path directory = Path.of((args.length > 0) ? args[0] : "benchmarks/results");
		Report report = new Report();
		report.read(directory);
		System.out.print(report.render());
	}

	void read(Path directory) throws IOException {
		try (Stream<Path> files = Files.list(directory)) {
			for (Path file : files.sorted().toList()) {
				String name = file.getFileName().toString();
				if (name.endsWith(".csv")) {
					readCsv(file);
				}
				else if (name.endsWith(".log")) {
					readLog(file);
				}
			}
		}
		mergeRounds();
	}

	/**
	 * Average the rows measured in several rounds (files {@code <name>-round<N>.csv}): each round runs every limiter
	 * once, so a machine that slows down or speeds up during the run weighs on ours and on the peers alike.
	 */
	private void mergeRounds() {
		Map<List<Object>, List<Row>> byBenchmark = new LinkedHashMap<>();
		for (Row row : this.rows) {
			byBenchmark.computeIfAbsent(List.of(row.name, row.mode, row.threads, row.unit, row.params),
					(key) -> new ArrayList<>())
				.add(row);
		}
		this.rows.clear();
		for (List<Row> rounds : byBenchmark.values()) {
			Row first = rounds.get(0);
			double score = rounds.stream().mapToDouble(Row::score).average().orElse(Double.NaN);
			this.rows.add(new Row(first.name, first.mode, first.threads, score, first.unit, first.params));
		}
	}

	private void readCsv(Path file) throws IOException {
		List<String> lines = Files.readAllLines(file);
		if (lines.isEmpty()) {
			return;
		}
		List<String> header = split(lines.get(0));
		for (String line : lines.subList(1, lines.size())) {
			List<String> cells = split(line);
			Map<String, String> params = new LinkedHashMap<>();
			for (int i = 7; i < header.size() && i < cells.size(); i++) {
				params.put(header.get(i).replace("Param: ", ""), cells.get(i));
			}
			String benchmark = cells.get(0);
			String name = benchmark.substring(benchmark.lastIndexOf('.', benchmark.indexOf(".decide") - 1) + 1);
			this.rows.add(new Row(name, cells.get(1), Integer.parseInt(cells.get(2)), parse(cells.get(4)),
					cells.get(6), params));
		}
	}

	private void readLog(Path file) throws IOException {
		// Sample mode spends time timing each call; command counts are read from the throughput runs only.
		boolean countCommands = !file.getFileName().toString().contains("latency");
		Pattern commandsLine = Pattern.compile("REDIS-COMMANDS (\\S+) keys=(\\d+) (\\w+): (.*)");
		Pattern httpLine = Pattern.compile("HTTP (\\S+) requests/s=([\\d.]+) p50_us=(\\d+) p99_us=(\\d+) 2xx=(\\d+) "
				+ "429=(\\d+) other=(\\d+)(?: mean_us=([\\d.]+))?");
		String threads = "?";
		for (String line : Files.readAllLines(file)) {
			if (line.startsWith("# Threads: ")) {
				threads = line.substring("# Threads: ".length()).split(" ")[0];
			}
			Matcher matcher = commandsLine.matcher(line.trim());
			if (matcher.matches() && countCommands) {
				this.commands.put(matcher.group(1) + " | " + matcher.group(2) + " | " + matcher.group(3) + " | "
						+ threads, matcher.group(4));
			}
			matcher = httpLine.matcher(line.trim());
			if (matcher.matches()) {
				this.httpRounds.computeIfAbsent(matcher.group(1), (label) -> new ArrayList<>())
					.add(new HttpLoad.Result(Double.parseDouble(matcher.group(2)), Long.parseLong(matcher.group(3)),
							Long.parseLong(matcher.group(4)), Long.parseLong(matcher.group(5)),
							Long.parseLong(matcher.group(6)), Long.parseLong(matcher.group(7)),
							(matcher.group(8) != null) ? Double.parseDouble(matcher.group(8)) : 0));
				// Rounds of the endpoints are interleaved; the median round stands for each.
				List<HttpLoad.Result> rounds = new ArrayList<>(this.httpRounds.get(matcher.group(1)));
				rounds.sort((a, b) -> Double.compare(a.requestsPerSecond(), b.requestsPerSecond()));
				this.http.put(matcher.group(1), rounds.get(rounds.size() / 2));
			}
		}
	}

	String render() {
		StringBuilder out = new StringBuilder();
		renderInMemory(out);
		renderRedis(out);
		renderLatency(out);
		renderCommands(out);
		renderHttp(out);
		out.append("\n### Targets\n\n");
		if (this.targets.isEmpty()) {
			out.append("(nothing measured)\n");
		}
		this.targets.forEach((target) -> out.append("- ").append(target).append('\n'));
		return out.toString();
	}

	private void renderInMemory(StringBuilder out) {
		List<Row> memory = this.rows.stream().filter((row) -> row.name.startsWith("InMemory")).toList();
		if (memory.isEmpty()) {
			return;
		}
		List<String> limiters = List.of("ratelimit-fixed", "ratelimit-token-bucket", "bucket4j", "resilience4j",
				"ratelimit-fixed-decision", "bucket4j-probe");
		out.append("\n### In-memory decision (ops/s)\n\n");
		out.append("| keys | threads | ").append(String.join(" | ", limiters))
			.append(" | ours / Bucket4j | with the whole answer: ours / Bucket4j |\n");
		out.append("|---|---|").append("---|".repeat(limiters.size() + 2)).append('\n');
		StringBuilder allocation = new StringBuilder();
		boolean profiled = memory.stream().anyMatch((row) -> row.name.endsWith("gc.alloc.rate.norm"));
		allocation.append("\n### In-memory allocation per decision (B/op, from `-prof gc`)\n\n");
		allocation.append("| keys | threads | ").append(String.join(" | ", limiters)).append(" |\n");
		allocation.append("|---|---|").append("---|".repeat(limiters.size())).append('\n');
		for (String keys : values(memory, "keys")) {
			for (int threads : threads(memory)) {
				out.append("| ").append(keys).append(" | ").append(threads).append(" |");
				allocation.append("| ").append(keys).append(" | ").append(threads).append(" |");
				for (String limiter : limiters) {
					out.append(' ').append(ops(score(memory, "decide", "thrpt", threads, keys, limiter, null)))
						.append(" |");
					allocation.append(' ')
						.append(bytes(score(memory, "decide:gc.alloc.rate.norm", "thrpt", threads, keys, limiter, null)))
						.append(" |");
				}
				allocation.append('\n');
				double ours = score(memory, "decide", "thrpt", threads, keys, OURS, null);
				double bucket4j = score(memory, "decide", "thrpt", threads, keys, "bucket4j", null);
				double oursWhole = score(memory, "decide", "thrpt", threads, keys, "ratelimit-fixed-decision", null);
				double bucket4jWhole = score(memory, "decide", "thrpt", threads, keys, "bucket4j-probe", null);
				out.append(' ').append(ratio(ours, bucket4j)).append(" | ").append(ratio(oursWhole, bucket4jWhole))
					.append(" |\n");
				String shape = "in memory, " + keys + " key(s), " + threads + " thread(s): ";
				target(ours / bucket4j >= 1.0, shape + "ours / Bucket4j local = " + ratio(ours, bucket4j)
						+ " (target >= 1.0)");
				target(oursWhole / bucket4jWhole >= 1.0, shape + "with the whole answer, ours / Bucket4j's probe = "
						+ ratio(oursWhole, bucket4jWhole) + " (target >= 1.0)");
				double alloc = score(memory, "decide:gc.alloc.rate.norm", "thrpt", threads, keys, OURS, null);
				target(alloc < 1, shape + "ours (tryAcquire) allocates " + bytes(alloc)
						+ " B per decision (target: nothing)");
			}
		}
		if (profiled) {
			out.append(allocation);
		}
	}

	private void renderRedis(StringBuilder out) {
		List<Row> redis = this.rows.stream()
			.filter((row) -> row.name.startsWith("RedisDecision") && row.mode.equals("thrpt"))
			.toList();
		if (redis.isEmpty()) {
			return;
		}
		List<String> limiters = new ArrayList<>(values(redis, "limiter"));
		limiters.sort((a, b) -> order(a) - order(b));
		out.append("\n### Redis decision throughput (ops/s)\n\n");
		out.append("| keys | outcome | threads | ").append(String.join(" | ", limiters))
			.append(" | ours / floor | ours / Bucket4j | ours / Bucket4j batching |\n");
		out.append("|---|---|---|").append("---|".repeat(limiters.size() + 3)).append('\n');
		for (String keys : values(redis, "keys")) {
			for (String outcome : values(redis, "outcome")) {
				for (int threads : threads(redis)) {
					out.append("| ").append(keys).append(" | ").append(outcome).append(" | ").append(threads).append(" |");
					for (String limiter : limiters) {
						out.append(' ').append(ops(score(redis, "decide", "thrpt", threads, keys, limiter, outcome)))
							.append(" |");
					}
					double ours = score(redis, "decide", "thrpt", threads, keys, OURS, outcome);
					double floor = score(redis, "decide", "thrpt", threads, keys, "floor", "allowed");
					double bucket4j = score(redis, "decide", "thrpt", threads, keys, "bucket4j", outcome);
					double batching = score(redis, "decide", "thrpt", threads, keys, "bucket4j-batching", outcome);
					out.append(' ').append(ratio(ours, floor)).append(" | ").append(ratio(ours, bucket4j)).append(" | ")
						.append(ratio(ours, batching)).append(" |\n");
					if (outcome.equals("allowed") && threads == 16) {
						target(ours / floor >= 0.9, "Redis, " + keys + " key(s), 16 threads: ours / bare EVALSHA floor = "
								+ ratio(ours, floor) + " (target >= 0.9)");
						double needed = keys.equals("1") ? 10 : 2;
						target(ours / bucket4j >= needed, "Redis, " + keys + " key(s), 16 threads: ours / Bucket4j = "
								+ ratio(ours, bucket4j) + " (target >= " + (int) needed + ")");
					}
					if (outcome.equals("allowed") && threads == 64 && keys.equals("1")) {
						target(ours / batching >= 1.0, "Redis, hot key, 64 threads: ours / Bucket4j batching = "
								+ ratio(ours, batching) + " (target >= 1.0)");
						double single = score(redis, "decide", "thrpt", 1, keys, OURS, outcome);
						target(ours >= single, "Redis, hot key: 64 threads " + ops(ours) + " vs 1 thread " + ops(single)
								+ " ops/s (target: no collapse)");
					}
				}
			}
		}
	}

	private void renderLatency(StringBuilder out) {
		List<Row> samples = this.rows.stream()
			.filter((row) -> row.name.startsWith("RedisDecision") && row.mode.equals("sample"))
			.toList();
		if (samples.isEmpty()) {
			return;
		}
		out.append("\n### Redis decision latency (µs, sample mode)\n\n");
		out.append("| keys | outcome | threads | limiter | p50 | p99 |\n|---|---|---|---|---|---|\n");
		List<Row> sorted = new ArrayList<>(samples);
		sorted.sort(Comparator.comparing((Row row) -> Integer.parseInt(row.params.get("keys")))
			.thenComparing((row) -> row.params.get("outcome"))
			.thenComparingInt((row) -> row.threads)
			.thenComparingInt((row) -> order(row.params.get("limiter"))));
		for (Row row : sorted) {
			if (row.name.endsWith("decide")) {
				String keys = row.params.get("keys");
				String limiter = row.params.get("limiter");
				String outcome = row.params.get("outcome");
				double p50 = score(samples, "decide:p0.50", "sample", row.threads, keys, limiter, outcome);
				double p99 = score(samples, "decide:p0.99", "sample", row.threads, keys, limiter, outcome);
				out.append("| ").append(keys).append(" | ").append(outcome).append(" | ").append(row.threads)
					.append(" | ").append(limiter).append(" | ").append(micros(p50)).append(" | ").append(micros(p99))
					.append(" |\n");
			}
		}
	}

	private void renderCommands(StringBuilder out) {
		if (this.commands.isEmpty()) {
			return;
		}
		out.append("\n### Redis commands and redis-server CPU per decision (INFO commandstats and INFO cpu, during measurement)\n\n");
		out.append("| limiter | keys | outcome | threads | per decision |\n|---|---|---|---|---|\n");
		this.commands.forEach((label, value) -> out.append("| ").append(label).append(" | ").append(value).append(" |\n"));
	}

	private void renderHttp(StringBuilder out) {
		if (this.http.isEmpty()) {
			return;
		}
		out.append("\n### HTTP end to end (sample app, loopback)\n\n");
		out.append("| endpoint | requests/s | p50 µs | p99 µs | 2xx | 429 | other |\n|---|---|---|---|---|---|---|\n");
		this.http.forEach((label, result) -> out.append("| ").append(label).append(" | ")
			.append(ops(result.requestsPerSecond())).append(" | ").append(result.p50Micros()).append(" | ")
			.append(result.p99Micros()).append(" | ").append(result.ok()).append(" | ").append(result.tooMany())
			.append(" | ").append(result.other()).append(" |\n"));
		HttpLoad.Result plain = this.http.get("memory-unlimited");
		HttpLoad.Result limited = this.http.get("memory-limited");
		if (plain != null && limited != null) {
			double cost = 1 - limited.requestsPerSecond() / plain.requestsPerSecond();
			target(cost < 0.10, String.format(Locale.ROOT,
					"HTTP: @RateLimited (in memory) costs %.1f%% of the unannotated endpoint's throughput (target < 10%%)",
					100 * cost));
		}
	}

	private void target(boolean met, String text) {
		if (!text.contains("n/a")) { // not measured in this run
			this.targets.add((met ? "met: " : "MISSED: ") + text);
		}
	}

	private static int order(String limiter) {
		if (limiter.equals("floor")) {
			return 100;
		}
		return limiter.startsWith("bucket4j") ? 50 + limiter.length() : limiter.length();
	}

	private static double score(List<Row> rows, String benchmark, String mode, int threads, String keys,
			String limiter, String outcome) {
		for (Row row : rows) {
			if (row.name.endsWith("." + benchmark) && row.mode.equals(mode) && row.threads == threads
					&& keys.equals(row.params.get("keys")) && limiter.equals(row.params.get("limiter"))
					&& (outcome == null || outcome.equals(row.params.get("outcome")))) {
				return row.score;
			}
		}
		return Double.NaN;
	}

	private static TreeSet<String> values(List<Row> rows, String param) {
		TreeSet<String> values = new TreeSet<>((a, b) -> {
			try {
				return Long.compare(Long.parseLong(a), Long.parseLong(b));
			}
			catch (NumberFormatException ex) {
				return a.compareTo(b);
			}
		});
		rows.forEach((row) -> values.add(row.params.getOrDefault(param, "-")));
		return values;
	}

	private static TreeSet<Integer> threads(List<Row> rows) {
		TreeSet<Integer> threads = new TreeSet<>();
		rows.forEach((row) -> threads.add(row.threads));
		return threads;
	}

	private static String ops(double value) {
		return Double.isNaN(value) ? "n/a" : String.format(Locale.ROOT, "%,.0f", value);
	}

	private static String bytes(double value) {
		return Double.isNaN(value) ? "n/a" : String.format(Locale.ROOT, (value < 1) ? "%.3f" : "%.0f", value);
	}

	private static String micros(double seconds) {
		return Double.isNaN(seconds) ? "n/a" : String.format(Locale.ROOT, "%.0f", seconds * 1e6);
	}

	private static String ratio(double a, double b) {
		return (Double.isNaN(a) || Double.isNaN(b) || b == 0) ? "n/a" : String.format(Locale.ROOT, "%.2f×", a / b);
	}

	private static double parse(String value) {
		try {
			return Double.parseDouble(value);
		}
		catch (NumberFormatException ex) {
			return Double.NaN;
		}
	}

	private static List<String> split(String line) {
		List<String> cells = new ArrayList<>();
		StringBuilder cell = new StringBuilder();
		boolean quoted = false;
		for (char c : line.toCharArray()) {
			if (c == '"') {
				quoted = !quoted;
			}
			else if (c == ',' && !quoted) {
				cells.add(cell.toString());
				cell.setLength(0);
			}
			else {
				cell.append(c);
			}
		}
		cells.add(cell.toString());
		return cells;
	}

	private record Row(String name, String mode, int threads, double score, String unit, Map<String, String> params) {
	}

}
