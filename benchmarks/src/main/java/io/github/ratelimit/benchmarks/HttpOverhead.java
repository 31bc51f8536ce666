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
 * same app, in one warm load-generator JVM, with the app's CPU time read from {@code /proc}.
 * <p>
 * {@snippet lang = "shell" :
 * java -cp benchmarks/target/benchmarks.jar io.github.ratelimit.benchmarks.HttpOverhead \
 *     http://127.0.0.1:8080 /api/v1/unlimited /api/v1/resources --app-pid=12345
 * }
 * Warms up in pairs of 10 s runs until the app's JIT compiler threads take under 1% of its CPU during two pairs in a
 * row (at least 3 pairs, at most 18), so that compilation does not count against whichever endpoint happens to be
 * measured while it runs.
 * <p>
 * Then it measures in phases ({@code --phase-pairs}, 200 by default, of {@code --phase-millis}, 1 s): every
 * connection sends to one endpoint, all switch together at the end of each phase, and each phase sets the responses
 * of its endpoint against the CPU time the app's threads ran in it (compiler threads left out). Adjacent phases of the
 * two endpoints make a pair, whose order alternates, so that the machine's speed is about the same for both halves
 * of a sample; see {@link PhasedCost} for the figures. With {@code --rounds}, it also runs rounds of
 * {@code --seconds} per endpoint, alternating which goes first, as a coarser cross-check.
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
		if (args.length < 4) {
			System.err.println("Usage: HttpOverhead <base-url> <plain-path> <limited-path> --app-pid=<pid> "
					+ "[--phase-pairs=200] [--phase-millis=1000] [--phase-log=<csv file>] [--rounds=0] [--seconds=5] "
					+ "[--connections=16] [--limited-app-pid=<pid of another app serving the limited path>]");
			System.exit(2);
		}
		URI base = URI.create(args[0]);
		URI plain = base.resolve(args[1]);
		URI limited = base.resolve(args[2]);
		long appPid = -1;
		long limitedAppPid = -1;
		int rounds = 0;
		int seconds = 5;
		int connections = 16;
		int phasePairs = 200;
		int phaseMillis = 1000;
		Path phaseLog = null;
		for (int i = 3; i < args.length; i++) {
			String[] option = args[i].split("=", 2);
			switch (option[0]) {
				case "--app-pid" -> appPid = Long.parseLong(option[1]);
				case "--limited-app-pid" -> limitedAppPid = Long.parseLong(option[1]);
				case "--rounds" -> rounds = Integer.parseInt(option[1]);
				case "--seconds" -> seconds = Integer.parseInt(option[1]);
				case "--connections" -> connections = Integer.parseInt(option[1]);
				case "--phase-pairs" -> phasePairs = Integer.parseInt(option[1]);
				case "--phase-millis" -> phaseMillis = Integer.parseInt(option[1]);
				case "--phase-log" -> phaseLog = Path.of(option[1]);
				default -> throw new IllegalArgumentException("Unknown option " + args[i]);
			}
		}
		if (appPid <= 0) {
			throw new IllegalArgumentException("--app-pid is required: the measurement reads the app's CPU time");
		}
		AppCpu app = new AppCpu(appPid);
		// Two builds side by side (the plain path on one app, the measured one on another, both on one CPU): each
		// phase's CPU is both apps', the idle one's as much in every phase.
		AppCpu limitedApp = (limitedAppPid > 0) ? new AppCpu(limitedAppPid) : app;
		java.util.function.LongSupplier cpuNanos = (limitedApp != app)
				? () -> app.cpuNanos() + limitedApp.cpuNanos() : app::cpuNanos;
		int warmPairs = 0;
		for (int pair = 1; pair <= MAX_WARM_UP_PAIRS; pair++) {
			Run first = Run.measure(plain, connections, WARM_UP_SECONDS, app);
			Run second = Run.measure(limited, connections, WARM_UP_SECONDS, limitedApp);
			double jitShare = (first.jitShare() + second.jitShare()) / 2;
			System.out.printf(Locale.ROOT, "warm-up %d: plain %.0f/s, limited %.0f/s, JIT %.1f%% of the app's CPU%n",
					pair, first.load().requestsPerSecond(), second.load().requestsPerSecond(), jitShare * 100);
			warmPairs = (jitShare < WARM_JIT_SHARE) ? warmPairs + 1 : 0;
			if (pair >= MIN_WARM_UP_PAIRS && warmPairs >= 2) {
				break;
			}
		}
		if (phasePairs > 0) {
			// One pair more than measured: the first, in which connections open, is left out.
			List<HttpLoad.Phase> phases = HttpLoad.runPhased(List.of(plain, limited), connections,
					Duration.ofMillis(phaseMillis), 2 * (phasePairs + 1), HttpOverhead::phaseEndpoint, cpuNanos);
			if (phaseLog != null) {
				writePhases(phaseLog, phases);
			}
			System.out.println(PhasedCost.of(phases.subList(2, phases.size())));
		}
		if (rounds > 0) {
			alternatingRounds(plain, limited, connections, seconds, rounds, app);
		}
	}

	/** Rounds of one endpoint at a time, alternating which goes first: a coarse cross-check of the phases. */
	private static void alternatingRounds(URI plain, URI limited, int connections, int seconds, int rounds, AppCpu app)
			throws InterruptedException {
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
		System.out.printf(Locale.ROOT, "median throughput difference %+.1f%% (quartiles %+.1f%% .. %+.1f%%)%n",
				quantile(differences, 0.5), quantile(differences, 0.25), quantile(differences, 0.75));
		double plainCpu = median(plainRuns, Run::cpuMicrosPerRequestWithoutJit);
		double limitedCpu = median(limitedRuns, Run::cpuMicrosPerRequestWithoutJit);
		System.out.printf(Locale.ROOT,
				"median app CPU per request, JIT compiler threads left out: plain %.1f us, limited %.1f us "
						+ "(%+.1f us, %+.1f%%)%n",
				plainCpu, limitedCpu, limitedCpu - plainCpu, percent(limitedCpu, plainCpu));
	}

	/** Every phase, the first pair's included, as CSV: to look at the spread, or compute other figures. */
	static void writePhases(Path file, List<HttpLoad.Phase> phases) throws IOException {
		StringBuilder csv = new StringBuilder("phase,endpoint,responses,failures,nanos,server_cpu_nanos\n");
		for (int k = 0; k < phases.size(); k++) {
			HttpLoad.Phase phase = phases.get(k);
			csv.append(k).append(',').append(phase.endpoint()).append(',').append(phase.responses()).append(',')
				.append(phase.failures()).append(',').append(phase.nanos()).append(',').append(phase.serverCpuNanos())
				.append('\n');
		}
		Files.writeString(file, csv);
	}

	/**
	 * The endpoint of phase {@code k}: 0 (plain) and 1 (limited) in pairs whose order alternates, plain first, then
	 * limited first (0 1, 1 0, 0 1, ...), so that a machine getting steadily slower or faster favours neither.
	 */
	static int phaseEndpoint(int k) {
		return (k + k / 2) % 2;
	}

	/**
	 * What the limited endpoint costs over the plain one, from pairs of adjacent phases: in each pair, the server's CPU
	 * per request of one against the other's, and their throughputs. Each pair is one sample, the machine's speed about
	 * the same across its two phases. The samples are ratios, summarised as logarithms: a noisy denominator biases the
	 * plain mean of ratios upwards (by about the square of the noise), the mean of their logarithms not. This machine
	 * also changes speed in spells, so a pair that straddles a change is far off: the median, with its
	 * distribution-free confidence interval, is the figure such pairs do not move; the mean is given beside it.
	 */
	record PhasedCost(int pairs, Estimate cpuMedian, Estimate cpuMean, Estimate throughputMedian,
			Estimate throughputMean, double plainCpuMicros, double limitedCpuMicros, long failures) {

		static PhasedCost of(List<HttpLoad.Phase> phases) {
			int pairs = phases.size() / 2;
			double[] cpuRatios = new double[pairs];
			double[] throughputRatios = new double[pairs];
			long[] requests = new long[2];
			long[] cpuNanos = new long[2];
			long failures = 0;
			for (int i = 0; i < pairs; i++) {
				HttpLoad.Phase a = phases.get(2 * i);
				HttpLoad.Phase b = phases.get(2 * i + 1);
				HttpLoad.Phase plain = (a.endpoint() == 0) ? a : b;
				HttpLoad.Phase limited = (a.endpoint() == 0) ? b : a;
				if (plain.endpoint() != 0 || limited.endpoint() != 1) {
					throw new IllegalArgumentException("Phase pair " + i + " is not one phase of each endpoint");
				}
				cpuRatios[i] = limited.serverCpuMicrosPerRequest() / plain.serverCpuMicrosPerRequest();
				throughputRatios[i] = limited.requestsPerSecond() / plain.requestsPerSecond();
				for (HttpLoad.Phase phase : List.of(a, b)) {
					requests[phase.endpoint()] += phase.responses();
					cpuNanos[phase.endpoint()] += phase.serverCpuNanos();
				}
				failures += a.failures() + b.failures();
			}
			return new PhasedCost(pairs, Estimate.medianOf(cpuRatios), Estimate.meanOf(cpuRatios),
					Estimate.medianOf(throughputRatios), Estimate.meanOf(throughputRatios),
					cpuNanos[0] / 1000.0 / requests[0], cpuNanos[1] / 1000.0 / requests[1], failures);
		}

		@Override
		public String toString() {
			return String.format(Locale.ROOT,
					"phases: %d pairs; the limited endpoint's CPU per request over the plain one's: median %s, mean %s; "
							+ "its throughput: median %s, mean %s; CPU per request in all, plain %.2f us, limited "
							+ "%.2f us; non-2xx or failed exchanges %d",
					this.pairs, this.cpuMedian, this.cpuMean, this.throughputMedian, this.throughputMean,
					this.plainCpuMicros, this.limitedCpuMicros, this.failures);
		}

	}

	/**
	 * A ratio's difference from 1, in percent, with its 95% confidence interval, from the ratios' logarithms.
	 */
	record Estimate(double percent, double lowPercent, double highPercent) {

		/** The mean, with the interval of the normal approximation (meant for 30 samples or more). */
		static Estimate meanOf(double[] ratios) {
			double[] logs = logs(ratios);
			if (logs.length < 2) {
				return new Estimate(Double.NaN, Double.NaN, Double.NaN);
			}
			double mean = Arrays.stream(logs).average().orElseThrow();
			double squares = 0;
			for (double log : logs) {
				squares += (log - mean) * (log - mean);
			}
			double halfWidth = 1.96 * Math.sqrt(squares / (logs.length - 1) / logs.length);
			return new Estimate(percentOf(mean), percentOf(mean - halfWidth), percentOf(mean + halfWidth));
		}

		/**
		 * The median, with the distribution-free interval of order statistics: the median lies below the k-th
		 * smallest of n samples with a binomial probability, k about n/2 - 0.98 sqrt(n) for 95%.
		 */
		static Estimate medianOf(double[] ratios) {
			double[] logs = logs(ratios);
			if (logs.length < 2) {
				return new Estimate(Double.NaN, Double.NaN, Double.NaN);
			}
			Arrays.sort(logs);
			int k = Math.max(0, (int) Math.floor((logs.length - 1.96 * Math.sqrt(logs.length)) / 2));
			return new Estimate(percentOf(quantile(logs, 0.5)), percentOf(logs[k]),
					percentOf(logs[logs.length - 1 - k]));
		}

		private static double[] logs(double[] ratios) {
			return Arrays.stream(ratios).filter((ratio) -> ratio > 0).map(Math::log).toArray();
		}

		private static double percentOf(double log) {
			return (Math.exp(log) - 1) * 100;
		}

		@Override
		public String toString() {
			return String.format(Locale.ROOT, "%+.2f%% (95%% confidence %+.2f%% .. %+.2f%%)", this.percent,
					this.lowPercent, this.highPercent);
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
			AppCpu.Reading before = app.read();
			HttpLoad.Result load = HttpLoad.run(url, connections, seconds);
			return of(load, seconds, before, app.read());
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

		/** By thread id, the thread's name, read once: ids are not reused while the app runs long enough to matter. */
		private final Map<String, String> threadNames = new HashMap<>();

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

		/**
		 * The CPU time the app's threads have run, compiler threads left out, in nanoseconds: the sum of the first
		 * field of each thread's {@code /proc/<pid>/task/<tid>/schedstat}, which counts nanoseconds rather than
		 * clock ticks. A thread that ended takes its time with it; across a phase of a second, that is a thread pool
		 * letting an idle thread go, with next to nothing spent.
		 */
		long cpuNanos() {
			long nanos = 0;
			try (DirectoryStream<Path> tasks = Files.newDirectoryStream(this.tasks)) {
				for (Path thread : tasks) {
					try {
						String name = this.threadNames.computeIfAbsent(thread.getFileName().toString(),
								(tid) -> readName(thread));
						if (!ThreadTicks.isJitCompiler(name)) {
							String schedstat = Files.readString(thread.resolve("schedstat"));
							nanos += Long.parseLong(schedstat.substring(0, schedstat.indexOf(' ')));
						}
					}
					catch (IOException | RuntimeException ex) {
						// The thread ended between listing and reading: it is left out.
					}
				}
			}
			catch (IOException ex) {
				// The process ended: nothing more to read.
			}
			return nanos;
		}

		private static String readName(Path thread) {
			try {
				return Files.readString(thread.resolve("comm")).strip();
			}
			catch (IOException ex) {
				return "";
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
			return isJitCompiler(this.name);
		}

		static boolean isJitCompiler(String name) {
			// HotSpot names them "C1 CompilerThread0", "C2 CompilerThread1", ..., cut to 15 characters by Linux.
			return name.startsWith("C1 Compiler") || name.startsWith("C2 Compiler");
		}

	}

}
