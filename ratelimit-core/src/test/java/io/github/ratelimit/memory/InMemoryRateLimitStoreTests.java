package io.github.ratelimit.memory;

import java.time.Duration;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.conformance.MutableTimeSource;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class InMemoryRateLimitStoreTests {

	private final MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");

	private final RateLimitPolicy policy = RateLimitPolicy.builder("p").limit(3).window(Duration.ofMinutes(1)).build();

	@Test
	void neverHoldsMoreThanMaxKeys() {
		InMemoryRateLimitStore store = store(100);
		for (int i = 0; i < 1_000; i++) {
			store.tryAcquire(this.policy, "key-" + i, 1);
			assertThat(store.size()).isLessThanOrEqualTo(100);
		}
	}

	@Test
	void dropsExpiredKeysFirstWhenFull() {
		InMemoryRateLimitStore store = store(10);
		for (int i = 0; i < 10; i++) {
			store.tryAcquire(this.policy, "old-" + i, 1);
		}
		this.clock.advance(Duration.ofMinutes(2));
		for (int i = 0; i < 10; i++) {
			assertThat(store.tryAcquire(this.policy, "new-" + i, 1).allowed()).isTrue();
		}
		assertThat(store.size()).isEqualTo(10);
		assertThat(store.rejectedNewKeys()).isZero();
	}

	@Test
	void whenFullOfLiveKeysRejectsNewKeysUntilOneExpiresAndNeverForgetsALiveCount() {
		InMemoryRateLimitStore store = store(2);
		store.tryAcquire(this.policy, "alice", 3);
		store.tryAcquire(this.policy, "bob", 1);
		Decision stranger = store.tryAcquire(this.policy, "carol", 1);
		assertThat(stranger.allowed()).isFalse();
		assertThat(stranger.retryAfterMillis()).isPositive();
		assertThat(store.tryAcquire(this.policy, "alice", 1).allowed()).as("alice's count is kept").isFalse();
		this.clock.advance(Duration.ofMinutes(1));
		assertThat(store.tryAcquire(this.policy, "carol", 1).allowed()).isTrue();
	}

	@Test
	void aFloodOfAMillionKeysKeepsMemoryBoundedAndLiveKeysExact() {
		InMemoryRateLimitStore store = store(1_000);
		RateLimitPolicy daily = RateLimitPolicy.builder("daily").limit(10).window(Duration.ofDays(1)).build();
		for (int user = 0; user < 500; user++) {
			store.tryAcquire(daily, "user-" + user, 4);
		}
		long admittedToFlood = 0;
		for (int i = 0; i < 1_000_000; i++) {
			if (store.tryAcquire(daily, "flood-" + i, 1).allowed()) {
				admittedToFlood++;
			}
			if (i % 100_000 == 0) {
				this.clock.advanceMillis(1);
			}
		}
		assertThat(store.size()).isLessThanOrEqualTo(1_000);
		assertThat(admittedToFlood).isEqualTo(500);
		for (int user = 0; user < 500; user++) {
			Decision decision = store.tryAcquire(daily, "user-" + user, 6);
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.remaining()).isZero();
			assertThat(store.tryAcquire(daily, "user-" + user, 1).allowed()).isFalse();
		}
	}

	@Test
	void statesOfEveryAlgorithmExpireOnceBackToFresh() {
		for (Algorithm algorithm : Algorithm.values()) {
			InMemoryRateLimitStore store = store(10);
			RateLimitPolicy policy = RateLimitPolicy.builder("p").algorithm(algorithm).limit(3).window(Duration.ofSeconds(1)).build();
			store.tryAcquire(policy, "k", 3);
			assertThat(store.purgeExpired()).as(algorithm.name()).isZero();
			this.clock.advance(Duration.ofSeconds(2));
			assertThat(store.purgeExpired()).as(algorithm.name()).isEqualTo(1);
			assertThat(store.size()).isZero();
		}
	}

	@Test
	void rejectsACostBelowOne() {
		assertThatIllegalArgumentException().isThrownBy(() -> store(1).tryAcquire(this.policy, "k", 0))
			.withMessage("'cost' must be at least 1 but was 0");
	}

	private InMemoryRateLimitStore store(long maxKeys) {
		return InMemoryRateLimitStore.builder().clock(this.clock).maxKeys(maxKeys).build();
	}

}
