package io.github.ratelimit.benchmarks;

import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class HttpAllocationTests {

	@Test
	void countsWhatEachThreadAllocatedBetweenTwoReadings() {
		assertThat(HttpAllocation.AppAllocations.since(Map.of(1L, 100L, 2L, 1_000L), Map.of(1L, 150L, 2L, 1_200L)))
			.isEqualTo(250);
	}

	@Test
	void countsAThreadStartedBetweenTheReadingsFromZeroAndLeavesAnEndedOneOut() {
		assertThat(HttpAllocation.AppAllocations.since(Map.of(1L, 100L, 2L, 1_000L), Map.of(1L, 150L, 3L, 70L)))
			.isEqualTo(120);
	}

}
