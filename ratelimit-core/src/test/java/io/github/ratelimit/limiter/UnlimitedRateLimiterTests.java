package io.github.ratelimit.limiter;

import java.time.Duration;
import java.util.List;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.store.Acquisition;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RateLimiter#unlimited()}, the limiter of an application whose limits are off: every request passes, however
 * many and whatever they cost, and what an application does with a limiter (reset, clear, give back) still works.
 */
class UnlimitedRateLimiterTests {

	private final RateLimiter limiter = RateLimiter.unlimited();

	private final RateLimitPolicy policy = RateLimitPolicy.builder("p").limit(3).window(Duration.ofMinutes(1)).build();

	@Test
	void admitsEveryRequestBeyondTheLimitWithTheWholeCapacityLeft() {
		for (int i = 0; i < 10; i++) {
			Decision decision = this.limiter.tryAcquire(this.policy, "k");
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.remaining()).isEqualTo(3);
			assertThat(decision.retryAfterMillis()).isZero();
		}
	}

	@Test
	void admitsACostBeyondTheCapacityWhichALimitedLimiterRejectsUnasked() {
		assertThat(this.limiter.tryAcquire(this.policy, "k", 4).allowed()).isTrue();
		assertThat(this.limiter.tryAcquireAll(List.of(new Acquisition(this.policy, "k", 4))).allowed()).isTrue();
	}

	@Test
	void admitsEveryRequestOnTheNonBlockingPathAndHasNothingToGiveBackOrCharge() {
		Admission admission = this.limiter
			.tryAcquireAllAsync(List.of(new Acquisition(this.policy, "a", 1), new Acquisition(this.policy, "b", 2)))
			.toCompletableFuture()
			.join();
		assertThat(admission.allowed()).isTrue();
		admission.refund(0);
		admission.settle(1, 10);
		assertThat(this.limiter.tryAcquireAsync(this.policy, "k", 3).toCompletableFuture().join().allowed()).isTrue();
	}

	@Test
	void resetsClearsAndPeeksWithoutAStore() {
		this.limiter.reset(this.policy, "k");
		this.limiter.clear();
		this.limiter.clearDenyCache();
		assertThat(this.limiter.peek(this.policy, "k").remaining()).isEqualTo(3);
		assertThat(this.limiter.isCircuitOpen()).isFalse();
	}

}
