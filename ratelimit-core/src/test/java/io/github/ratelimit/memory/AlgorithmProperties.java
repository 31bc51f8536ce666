package io.github.ratelimit.memory;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.conformance.AdmissionLog;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.conformance.RandomScenario;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random request sequences against every algorithm: remaining never negative nor above the capacity, and never more
 * admitted in an interval of one window than the algorithm's bound.
 */
class AlgorithmProperties {

	@Property(tries = 1000)
	void remainingStaysWithinZeroAndTheCapacityAndAdmissionsWithinTheBound(
			@ForAll("scenarios") RandomScenario scenario) {
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).build();
		RateLimitPolicy policy = scenario.policy("p");
		List<AdmissionLog> logs = List.of(new AdmissionLog(), new AdmissionLog(), new AdmissionLog());
		for (RandomScenario.Step step : scenario.steps()) {
			clock.advanceMillis(step.advanceMillis());
			Decision decision = store.tryAcquire(policy, "key-" + step.key(), step.cost());
			assertThat(decision.remaining()).isBetween(0L, policy.capacity());
			assertThat(decision.resetAfterMillis()).isNotNegative();
			if (decision.allowed()) {
				logs.get(step.key()).admitted(clock.currentTimeMillis(), step.cost());
			}
			else {
				assertThat(decision.retryAfterMillis()).isNotZero();
			}
		}
		for (AdmissionLog log : logs) {
			AdmissionLog.Witness witness = log.maxInWindow(scenario.windowMillis(), scenario.closedWindows());
			assertThat((long) witness.count()).as(scenario.algorithm() + " " + witness).isLessThanOrEqualTo(scenario.bound());
		}
	}

	@Property(tries = 1000)
	void theWindowSweepFindsWhatCountingEveryIntervalFinds(@ForAll("times") List<Long> times, @ForAll("windows") long window) {
		long[] sorted = times.stream().mapToLong(Long::longValue).sorted().toArray();
		for (boolean closed : new boolean[] { true, false }) {
			int naive = 0;
			for (long end : sorted) {
				int count = 0;
				for (long time : sorted) {
					if (time <= end && (closed ? end - time <= window : end - time < window)) {
						count++;
					}
				}
				naive = Math.max(naive, count);
			}
			AdmissionLog log = new AdmissionLog();
			times.forEach((time) -> log.admitted(time, 1));
			assertThat(log.maxInWindow(window, closed).count()).isEqualTo(naive);
		}
	}

	@Provide
	Arbitrary<RandomScenario> scenarios() {
		return RandomScenario.scenarios(200);
	}

	@Provide
	Arbitrary<List<Long>> times() {
		// Few distinct values, so duplicates and exact-window gaps are common.
		return Arbitraries.longs().between(0, 50).list().ofMaxSize(40).map(ArrayList::new);
	}

	@Provide
	Arbitrary<Long> windows() {
		return Arbitraries.longs().between(1, 20);
	}

}
