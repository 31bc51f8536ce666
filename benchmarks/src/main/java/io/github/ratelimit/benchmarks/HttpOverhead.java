package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.net.URI;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * What an endpoint's rate limiting costs over HTTP: {@link HttpLoad} against a plain endpoint and a limited one of the
 * same app, in one warm load-generator JVM, in rounds that alternate which endpoint goes first, with the app's CPU
 * time per request read from {@code /proc} around every run.
 * <p>
 * {@snippet lang = "shell" :
 * java -cp benchmarks/target/benchmarks.jar io.github.ratelimit.benchmarks.HttpOverhead \
 *     http://127.0.0.1:8080 /api/v1/unlimited /api/v1/resources --app-pid=12345 --rounds=20 --seconds=5
 * }
 * Warms up in pairs of 10 s runs until the app's JIT compiler threads take under 1% of its CPU during two pairs in a
 * row (at least 3 pairs, at most 18), so that compilation does not count against whichever endpoint happens to be
 * measured while it runs. Without {@code --app-pid} it warms up for 3 pairs.
 * <p>
 * Then two measurements:
 * <ul>
 * <li>Rounds of one endpoint at a time, alternating which goes first: the throughput difference and, with
 * {@code --app-pid}, each endpoint's CPU per request (compiler threads left out). These move with everything else the
 * machine does, and serve as the cross-check of the next.</li>
 * <li>Interleaved rounds: every connection sends to both endpoints in turn, so that both meet the app in the same
 * state at every moment. The difference between the endpoints' mean latencies is taken as the difference in their
 * cost per request. That assumes the app serves the requests one after another, each running to completion once
 * started, which holds for requests of some tens of microseconds on one saturated core (a scheduler slice is
 * milliseconds): every request then waits behind the same mix of both, and only its own work differs. With
 * {@code --app-pid}, that difference is set against the app's CPU per request in the same round, giving the share the
 * limited endpoint adds to the plain one's cost; its throughput alone would be {@code 1 / (1 + share)} of the plain
 * one's.</li>
 * </ul>
 * The number of connections must be even, so that as many requests to each endpoint are in flight.
 */
public final class HttpOverhead {

	private static final int WARM_UP_SECONDS = 10;

	private static final int MIN_WARM_UP_PAIRS = 3;

	private static final int MAX_WARM_UP_PAIRS = 18;

	/** The compiler threads' share of the app's CPU under which the app counts as warm. */
	private static final double WARM_JIT_SHARE = 0.01;

	private HttpOverhead() {
	}

	public static void main(String[] args) throws Exception {
		if (args.length < 3) {
			System.err.println("Usage: HttpOverhead <base-url> <plain-path> <limited-path> [--app-pid=<pid>] "
					+ "[--rounds=10] [--interleaved-rounds=10] [--seconds=5] [--connections=16]");
			System.exit(2);
		}
		URI base = URI.create(args[0]);
		URI plain = base.resolve(args[1]);
		URI limited = base.resolve(args[2]);
		long appPid = -1;
		int rounds = 10;
		int seconds = 5;
		int connections = 16;
		int interleavedRounds = 10;
		for (int i = 3; i < args.length; i++) {
			String[] option = args[i].split("=", 2);
			switch (option[0]) {
				case "--app-pid" -> appPid = Long.parseLong(option[1]);
				case "--rounds" -> rounds = Integer.parseInt(option[1]);
				case "--seconds" -> seconds = Integer.parseInt(option[1]);
				case "--connections" -> connections = Integer.parseInt(option[1]);
				case "--interleaved-rounds" -> interleavedRounds = Integer.parseInt(option[1]);
				default -> throw new IllegalArgumentException("Unknown option " + args[i]);
			}
		}
		if (connections % 2 != 0) {
			throw new IllegalArgumentException("--connections must be even but was " + connections);
		}
		AppCpu app = (appPid > 0) ? new AppCpu(appPid) : null;
		int warmPairs = 0;
		for (int pair = 1; pair <= MAX_WARM_UP_PAIRS; pair++) {
			Run first = Run.measure(plain, connections, WARM_UP_SECONDS, app);
			Run second = Run.measure(limited, connections, WARM_UP_SECONDS, app);
			double jitShare = (first.jitShare() + second.jitShare()) / 2;
			System.out.printf(Locale.ROOT, "warm-up %d: plain %.0f/s, limited %.0f/s, JIT %.1f%% of the app's CPU%n",
					pair, first.load().requestsPerSecond(), second.load().requestsPerSecond(), jitShare * 100);
			warmPairs = (jitShare < WARM_JIT_SHARE) ? warmPairs + 1 : 0;
			if (pair >= MIN_WARM_UP_PAIRS && (app == null || warmPairs >= 2)) {
				break;
			}
		}
		List<Run> plainRuns = new ArrayList<>();
		List<Run> limitedRuns = new ArrayList<>();
		double[] differences = new double[rounds];
		for (int round = 1; round <= rounds; round++) {
			Run plainRun;
			Run limitedRun;
			// Alternating the order, so that a machine getting slower or faster does not always favour one endpoint.
			if (round % 2 == 1) {
				plainRun = Run.measure(plain, connections, seconds, app);
				limitedRun = Run.measure(limited, connections, seconds, app);
			}
			else {
				limitedRun = Run.measure(limited, connections, seconds, app);
				plainRun = Run.measure(plain, connections, seconds, app);
			}
			plainRuns.add(plainRun);
			limitedRuns.add(limitedRun);
			differences[round - 1] = percent(limitedRun.load().requestsPerSecond(), plainRun.load().requestsPerSecond());
			System.out.println("round " + round + " plain   " + plainRun);
			System.out.println("round " + round + " limited " + limitedRun);
			System.out.printf(Locale.ROOT, "round %d throughput difference %+.1f%%%n", round, differences[round - 1]);
		}
		double[] latencyDifferences = new double[interleavedRounds];
		double[] interleavedCosts = new double[interleavedRounds];
		for (int round = 1; round <= interleavedRounds; round++) {
			AppCpu.Reading before = (app != null) ? app.read() : null;
			List<HttpLoad.Result> both = HttpLoad.runInterleaved(List.of(plain, limited), connections, seconds);
			double difference = both.get(1).meanMicros() - both.get(0).meanMicros();
			latencyDifferences[round - 1] = difference;
			System.out.println("interleaved " + round + " plain   " + both.get(0));
			System.out.println("interleaved " + round + " limited " + both.get(1));
			if (app != null) {
				Run run = Run.of(new HttpLoad.Result(0, 0, 0, both.get(0).ok() + both.get(1).ok(),
						both.get(0).tooMany() + both.get(1).tooMany(), both.get(0).other() + both.get(1).other(), 0),
						seconds, before, app.read());
				// The app's CPU per request of the two together is the plain one's plus half the difference.
				double plainCpu = run.cpuMicrosPerRequestWithoutJit() - difference / 2;
				interleavedCosts[round - 1] = percent(plainCpu + difference, plainCpu);
				System.out.printf(Locale.ROOT,
						"interleaved %d mean latency difference %+.2f us; app CPU per request %.1f us: %+.1f%%%n",
						round, difference, run.cpuMicrosPerRequestWithoutJit(), interleavedCosts[round - 1]);
			}
			else {
				System.out.printf(Locale.ROOT, "interleaved %d mean latency difference %+.2f us%n", round, difference);
			}
		}
		if (rounds > 0) {
			System.out.printf(Locale.ROOT, "median throughput difference %+.1f%% (quartiles %+.1f%% .. %+.1f%%)%n",
					quantile(differences, 0.5), quantile(differences, 0.25), quantile(differences, 0.75));
		}
		if (interleavedRounds > 0) {
			System.out.printf(Locale.ROOT,
					"interleaved: median mean latency difference %+.2f us (quartiles %+.2f .. %+.2f us)%n",
					quantile(latencyDifferences, 0.5), quantile(latencyDifferences, 0.25),
					quantile(latencyDifferences, 0.75));
			if (app != null) {
				double share = quantile(interleavedCosts, 0.5);
				System.out.printf(Locale.ROOT,
						"interleaved: median cost of the limited endpoint over the plain one %+.1f%% of its CPU "
								+ "(quartiles %+.1f%% .. %+.1f%%): its throughput alone %+.1f%%%n",
						share, quantile(interleavedCosts, 0.25), quantile(interleavedCosts, 0.75),
						(100 / (1 + share / 100)) - 100);
			}
		}
		if (app != null && rounds > 0) {
			double plainCpu = median(plainRuns, Run::cpuMicrosPerRequestWithoutJit);
			double limitedCpu = median(limitedRuns, Run::cpuMicrosPerRequestWithoutJit);
			System.out.printf(Locale.ROOT,
					"median app CPU per request, JIT compiler threads left out: plain %.1f us, limited %.1f us "
							+ "(%+.1f us, %+.1f%%)%n",
					plainCpu, limitedCpu, limitedCpu - plainCpu, percent(limitedCpu, plainCpu));
		}
	}

	/** The difference in percent of the base; NaN, which the quantiles leave out, when there is no positive base. */
	static double percent(double value, double base) {
		return (base > 0) ? (value - base) * 100 / base : Double.NaN;
	}

	private static double median(List<Run> runs, ToDoubleFunction<Run> value) {
		return quantile(runs.stream().mapToDouble(value).toArray(), 0.5);
	}

	/** The quantile, interpolating between the two nearest values; NaN values (rounds without a figure) left out. */
	static double quantile(double[] values, double q) {
		double[] sorted = Arrays.stream(values).filter((value) -> !Double.isNaN(value)).sorted().toArray();
		if (sorted.length == 0) {
			return Double.NaN;
		}
		double position = q * (sorted.length - 1);
		int below = (int) Math.floor(position);
		int above = Math.min(below + 1, sorted.length - 1);
		return sorted[below] + (sorted[above] - sorted[below]) * (position - below);
	}

	/** One run of load, and what the app spent on it, if known. */
	record Run(HttpLoad.Result load, Duration seconds, Duration appCpu, double jitShare) {

		static Run measure(URI url, int connections, int seconds, AppCpu app) throws InterruptedException {
			AppCpu.Reading before = (app != null) ? app.read() : null;
			HttpLoad.Result load = HttpLoad.run(url, connections, seconds);
			return (app != null) ? of(load, seconds, before, app.read())
					: new Run(load, Duration.ofSeconds(seconds), Duration.ZERO, 0);
		}

		static Run of(HttpLoad.Result load, int seconds, AppCpu.Reading before, AppCpu.Reading after) {
			return new Run(load, Duration.ofSeconds(seconds), after.cpu().minus(before.cpu()), after.jitShareSince(before));
		}

		long requests() {
			return this.load.ok() + this.load.tooMany() + this.load.other();
		}

		double cpuMicrosPerRequestWithoutJit() {
			return (requests() > 0) ? this.appCpu.toNanos() * (1 - this.jitShare) / 1000.0 / requests() : 0;
		}

		@Override
		public String toString() {
			return String.format(Locale.ROOT, "%s app_cpu_us_per_request=%.1f jit=%.1f%% app_cpu_load=%.2f", this.load,
					cpuMicrosPerRequestWithoutJit(), this.jitShare * 100,
					(double) this.appCpu.toNanos() / this.seconds.toNanos());
		}

	}

	/**
	 * The app's CPU time, from its process handle, and the share its JIT compiler threads took, from
	 * {@code /proc/<pid>/task/<tid>/stat} (Linux; elsewhere the share reads 0).
	 */
	static final class AppCpu {

		private final ProcessHandle process;

		private final Path tasks;

		AppCpu(long pid) {
			this.process = ProcessHandle.of(pid)
				.orElseThrow(() -> new IllegalArgumentException("No process " + pid));
			this.tasks = Path.of("/proc", Long.toString(pid), "task");
		}

		/** The process's CPU time, and each live thread's ticks by thread id. */
		record Reading(Duration cpu, Map<Long, ThreadTicks> threads) {

			/**
			 * The compiler threads' share of the ticks the threads spent since {@code before}, counted per thread:
			 * HotSpot starts and stops compiler threads as the work comes and goes, and a sum over the threads alive
			 * at each reading would lose an ended thread's whole past. A thread that started since counts in full; one
			 * that ended since is left out, with its last ticks.
			 */
			double jitShareSince(Reading before) {
				long ticks = 0;
				long jitTicks = 0;
				for (Map.Entry<Long, ThreadTicks> thread : this.threads.entrySet()) {
					ThreadTicks earlier = before.threads.get(thread.getKey());
					long spent = thread.getValue().ticks() - ((earlier != null) ? earlier.ticks() : 0);
					ticks += spent;
					if (thread.getValue().isJitCompiler()) {
						jitTicks += spent;
					}
				}
				return (ticks > 0) ? (double) jitTicks / ticks : 0;
			}

		}

		Reading read() {
			Duration cpu = this.process.info().totalCpuDuration().orElse(Duration.ZERO);
			Map<Long, ThreadTicks> threads = new HashMap<>();
			if (Files.isDirectory(this.tasks)) {
				try (DirectoryStream<Path> tasks = Files.newDirectoryStream(this.tasks)) {
					for (Path thread : tasks) {
						try {
							threads.put(Long.parseLong(thread.getFileName().toString()),
									ThreadTicks.parse(Files.readString(thread.resolve("stat"))));
						}
						catch (IOException ex) {
							// The thread ended between listing and reading: it is left out of this reading.
						}
					}
				}
				catch (IOException ex) {
					// The process ended: no threads to read.
				}
			}
			return new Reading(cpu, threads);
		}

	}

	/** A thread's name and its user and system CPU time in clock ticks, from one {@code /proc/.../stat} line. */
	record ThreadTicks(String name, long ticks) {

		/**
		 * Parse a stat line: the name is in parentheses and may itself hold spaces and parentheses, so the fields
		 * are counted from the last {@code ')'}.
		 */
		static ThreadTicks parse(String stat) {
			int open = stat.indexOf('(');
			int close = stat.lastIndexOf(')');
			String[] fields = stat.substring(close + 2).trim().split(" ");
			// After the name: state is field 3 of the line, utime field 14, stime field 15.
			return new ThreadTicks(stat.substring(open + 1, close),
					Long.parseLong(fields[14 - 3]) + Long.parseLong(fields[15 - 3]));
		}

		boolean isJitCompiler() {
			// HotSpot names them "C1 CompilerThread0", "C2 CompilerThread1", ..., cut to 15 characters by Linux.
			return this.name.startsWith("C1 Compiler") || this.name.startsWith("C2 Compiler");
		}

	}

}
