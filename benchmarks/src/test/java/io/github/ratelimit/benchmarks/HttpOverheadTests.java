package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

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
	void compilerShareCountsWhatEachThreadSpentSinceTheFirstReading() {
		HttpOverhead.AppCpu.Reading before = new HttpOverhead.AppCpu.Reading(Duration.ZERO,
				Map.of(1L, ticks("http-nio-exec-1", 100), 2L, ticks("C2 CompilerThre", 500)));
		// The compiler thread with 500 ticks has ended; a new one started and spent 10.
		HttpOverhead.AppCpu.Reading after = new HttpOverhead.AppCpu.Reading(Duration.ZERO,
				Map.of(1L, ticks("http-nio-exec-1", 190), 3L, ticks("C2 CompilerThre", 10)));
		assertThat(after.jitShareSince(before)).isEqualTo(0.1);
	}

	private static HttpOverhead.ThreadTicks ticks(String name, long ticks) {
		return new HttpOverhead.ThreadTicks(name, ticks);
	}

}
