package io.github.ratelimit.benchmarks;

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
	void readsTheCpuOfThisJvmAndSeesItsCompilerThreads() {
		HttpOverhead.AppCpu.Reading reading = new HttpOverhead.AppCpu(ProcessHandle.current().pid()).read();
		assertThat(reading.cpu()).isPositive();
		assertThat(reading.jitTicks()).isLessThanOrEqualTo(reading.ticks());
	}

}
