package io.github.ratelimit.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class HttpOverheadTests {

	@Test
	void readsAThreadsNameAndTicksEvenWhenTheNameHoldsSpacesAndParentheses() {
		HttpOverhead.ThreadTicks ticks = HttpOverhead.ThreadTicks
			.parse("4242 (C2 Compiler) x) S 1 4240 4240 0 -1 4194368 100 0 0 0 1200 34 0 0 20 0 1 0 5 0 0\n");
		assertThat(ticks.name()).isEqualTo("C2 Compiler) x");
		assertThat(ticks.ticks()).isEqualTo(1234);
		assertThat(ticks.isJitCompiler()).isTrue();
		assertThat(HttpOverhead.ThreadTicks.parse("7 (http-nio-8080-exec-1) R 1 2 3 4 5 6 7 8 9 10 3 4 0 0 20 0 1 0")
			.isJitCompiler()).isFalse();
	}

	@Test
	void quantilesInterpolateBetweenTheNearestValues() {
		double[] values = { 4, 1, 3, 2 };
		assertThat(HttpOverhead.quantile(values, 0.5)).isEqualTo(2.5);
		assertThat(HttpOverhead.quantile(values, 0.25)).isEqualTo(1.75);
		assertThat(HttpOverhead.quantile(new double[] { 7 }, 0.75)).isEqualTo(7);
		assertThat(values).containsExactly(4, 1, 3, 2);
	}

	@Test
	void quantilesLeaveOutRoundsWithoutAFigure() {
		assertThat(HttpOverhead.quantile(new double[] { 1, Double.NaN, 3 }, 0.5)).isEqualTo(2);
		assertThat(HttpOverhead.quantile(new double[] { Double.NaN }, 0.5)).isNaN();
		assertThat(HttpOverhead.percent(5, 0)).isNaN();
	}

	@Test
	void readsTheCpuOfThisJvmThreadByThread() {
		HttpOverhead.AppCpu.Reading reading = new HttpOverhead.AppCpu(ProcessHandle.current().pid()).read();
		assertThat(reading.cpu()).isPositive();
		assertThat(reading.threads()).isNotEmpty();
		assertThat(reading.jitShareSince(reading)).isZero();
	}

	@Test
	void readsTheCpuTimeOfThisJvmsThreadsInNanoseconds() throws InterruptedException {
		HttpOverhead.AppCpu cpu = new HttpOverhead.AppCpu(ProcessHandle.current().pid());
		long before = cpu.cpuNanos();
		// Spin on this thread's own CPU time, not the wall clock: a busy shared machine may not run us at all.
		ThreadMXBean threads = ManagementFactory.getThreadMXBean();
		long spin = threads.getCurrentThreadCpuTime() + 40_000_000;
		while (threads.getCurrentThreadCpuTime() < spin) {
			Thread.onSpinWait();
		}
		// Other threads that end meanwhile take their time with them: ask for a quarter of what this one spent.
		assertThat(cpu.cpuNanos() - before).isGreaterThanOrEqualTo(10_000_000);
	}

	@Test
	void compilerShareCountsWhatEachThreadSpentSinceTheFirstReading() {
		HttpOverhead.AppCpu.Reading before = new HttpOverhead.AppCpu.Reading(Duration.ZERO,
				Map.of(1L, ticks("http-nio-exec-1", 100), 2L, ticks("C2 CompilerThre", 500)));
		// The compiler thread with 500 ticks has ended; a new one started and spent 10.
		HttpOverhead.AppCpu.Reading after = new HttpOverhead.AppCpu.Reading(Duration.ZERO,
				Map.of(1L, ticks("http-nio-exec-1", 190), 3L, ticks("C2 CompilerThre", 10)));
		assertThat(after.jitShareSince(before)).isEqualTo(0.1);
	}

	@Test
	void phasesComeInPairsOfBothEndpointsWhoseOrderAlternates() {
		assertThat(IntStream.range(0, 8).map(HttpOverhead::phaseEndpoint).toArray())
			.containsExactly(0, 1, 1, 0, 0, 1, 1, 0);
	}

	@Test
	void aPairSetsTheLimitedPhaseAgainstThePlainOneWhicheverCameFirst() {
		// Plain first at 50 us a request, then limited first at 55 us, at half the speed: both pairs say +10%.
		List<HttpLoad.Phase> phases = List.of(phase(0, 20_000, 1_000_000_000L), phase(1, 18_182, 1_000_010_000L),
				phase(1, 9_091, 1_000_010_000L), phase(0, 10_000, 1_000_000_000L));
		HttpOverhead.PhasedCost cost = HttpOverhead.PhasedCost.of(phases);
		assertThat(cost.pairs()).isEqualTo(2);
		assertThat(cost.cpuMedian().percent()).isCloseTo(10, within(0.01));
		assertThat(cost.cpuMean().percent()).isCloseTo(10, within(0.01));
		assertThat(cost.throughputMedian().percent()).isCloseTo(-9.09, within(0.01));
		assertThat(cost.throughputMean().percent()).isCloseTo(-9.09, within(0.01));
		// In all: 2 s of CPU for 30,000 plain requests, 2.00002 s for 27,273 limited ones.
		assertThat(cost.plainCpuMicros()).isCloseTo(66.67, within(0.01));
		assertThat(cost.limitedCpuMicros()).isCloseTo(73.33, within(0.01));
	}

	@Test
	void ratiosAreSummarisedAsLogarithmsSoThatANoisyDenominatorBiasesNothing() {
		HttpOverhead.Estimate noise = HttpOverhead.Estimate.meanOf(new double[] { 1.25, 0.8, 1.25, 0.8 });
		assertThat(noise.percent()).isCloseTo(0, within(1e-9));
		assertThat(noise.lowPercent()).isNegative();
		assertThat(noise.highPercent()).isPositive();
		HttpOverhead.Estimate steady = HttpOverhead.Estimate.meanOf(new double[] { 1.05, 1.05, 1.05 });
		assertThat(steady.percent()).isCloseTo(5, within(1e-9));
		assertThat(steady.highPercent() - steady.lowPercent()).isCloseTo(0, within(1e-9));
	}

	@Test
	void theMedianIsNotMovedByPairsThatStraddleAChangeOfTheMachinesSpeed() {
		double[] ratios = new double[101];
		java.util.Arrays.fill(ratios, 1.03);
		ratios[0] = 1.6;
		ratios[1] = 0.6;
		ratios[2] = 1.9;
		HttpOverhead.Estimate median = HttpOverhead.Estimate.medianOf(ratios);
		assertThat(median.percent()).isCloseTo(3, within(1e-9));
		assertThat(median.lowPercent()).isCloseTo(3, within(1e-9));
		assertThat(median.highPercent()).isCloseTo(3, within(1e-9));
		assertThat(HttpOverhead.Estimate.meanOf(ratios).percent()).isGreaterThan(3.5);
	}

	@Test
	void theMediansIntervalIsBoundedByOrderStatistics() {
		double[] ratios = new double[100];
		for (int i = 0; i < ratios.length; i++) {
			ratios[i] = 1 + i / 1000.0; // +0.0% .. +9.9%
		}
		HttpOverhead.Estimate median = HttpOverhead.Estimate.medianOf(ratios);
		// k = floor((100 - 1.96 * 10) / 2) = 40: the 41st smallest and the 41st largest.
		assertThat(median.lowPercent()).isCloseTo(4.0, within(1e-9));
		assertThat(median.highPercent()).isCloseTo(5.9, within(1e-9));
		assertThat(median.percent()).isCloseTo(4.95, within(0.001));
	}

	@Test
	void everyPhaseCanBeWrittenOutAsCsv(@org.junit.jupiter.api.io.TempDir java.nio.file.Path directory)
			throws Exception {
		java.nio.file.Path file = directory.resolve("phases.csv");
		HttpOverhead.writePhases(file, List.of(phase(0, 20_000, 1_000_000_000L), phase(1, 18_182, 1_000_010_000L)));
		assertThat(java.nio.file.Files.readAllLines(file)).containsExactly(
				"phase,endpoint,responses,failures,nanos,server_cpu_nanos", "0,0,20000,0,1000000000,1000000000",
				"1,1,18182,0,1000000000,1000010000");
	}

	private static HttpLoad.Phase phase(int endpoint, long responses, long serverCpuNanos) {
		return new HttpLoad.Phase(endpoint, responses, 0, 1_000_000_000L, serverCpuNanos);
	}

	private static HttpOverhead.ThreadTicks ticks(String name, long ticks) {
		return new HttpOverhead.ThreadTicks(name, ticks);
	}

}
