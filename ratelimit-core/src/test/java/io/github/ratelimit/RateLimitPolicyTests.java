package io.github.ratelimit;

import io.github.ratelimit.internal.Durations;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class RateLimitPolicyTests {

	@Test
	void burstDefaultsToTheLimit() {
		RateLimitPolicy policy = RateLimitPolicy.builder("p").algorithm(Algorithm.TOKEN_BUCKET).limit(7).window(Duration.ofSeconds(3)).build();
		assertThat(policy.burst()).isEqualTo(7);
		assertThat(policy.capacity()).isEqualTo(7);
	}

	@Test
	void aPlansVariantIsAPolicyOfItsOwnThatItsBuilderKeeps() {
		RateLimitPolicy declared = RateLimitPolicy.builder("quota").limit(3).window(Duration.ofMinutes(1)).build();
		RateLimitPolicy pro = declared.toBuilder().variant("pro").build();
		assertThat(declared.variant()).isEmpty();
		assertThat(pro.variant()).isEqualTo("pro");
		assertThat(pro).isNotEqualTo(declared);
		assertThat(pro.toBuilder().build()).isEqualTo(pro).hasSameHashCodeAs(pro);
		assertThat(pro).hasToString("RateLimitPolicy[quota (pro): FIXED 3 per 1m, failure mode ALLOW]");
	}

	@Test
	void aShadowPolicyCountsAsTheEnforcedOneAndItsBuilderKeepsTheMode() {
		RateLimitPolicy enforced = RateLimitPolicy.builder("search").limit(3).window(Duration.ofMinutes(1)).build();
		RateLimitPolicy shadow = enforced.toBuilder().mode(PolicyMode.SHADOW).build();
		assertThat(enforced.mode()).isEqualTo(PolicyMode.ENFORCE);
		assertThat(shadow.mode()).isEqualTo(PolicyMode.SHADOW);
		assertThat(shadow.toBuilder().build().mode()).isEqualTo(PolicyMode.SHADOW);
		assertThat(shadow).isEqualTo(enforced).hasSameHashCodeAs(enforced);
		assertThat(shadow).hasToString("RateLimitPolicy[search: FIXED 3 per 1m, failure mode ALLOW, shadow]");
	}

	@Test
	void theRateIsKeptAsExactIntegers() {
		RateLimitPolicy policy = RateLimitPolicy.builder("p").limit(7).window(Duration.ofSeconds(3)).build();
		assertThat(policy.unitsPerToken()).isEqualTo(3000);
		assertThat(policy.unitsPerMilli()).isEqualTo(7);
		RateLimitPolicy round = RateLimitPolicy.builder("p").limit(100).window(Duration.ofMinutes(1)).build();
		assertThat(round.unitsPerToken()).isEqualTo(600);
		assertThat(round.unitsPerMilli()).isEqualTo(1);
	}

	@Test
	void invalidValuesAreNamedWithTheirValue() {
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimitPolicy.builder("p").limit(0).window(Duration.ofSeconds(1)).build())
			.withMessage("'limit' must be at least 1 but was 0");
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimitPolicy.builder("p").limit(1).window(Duration.ZERO).build())
			.withMessage("'window' must be a positive duration but was '0s'");
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimitPolicy.builder("p").limit(1).window(Duration.ofNanos(1_500_000)).build())
			.withMessage("'window' must be a whole number of milliseconds but was 'PT0.0015S'");
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimitPolicy.builder(" ").limit(1).window(Duration.ofSeconds(1)).build())
			.withMessage("'name' must not be empty");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimitPolicy.builder("p").algorithm(Algorithm.LEAKY_BUCKET).limit(999_983).burst(1L << 40)
				.window(Duration.ofDays(1)).build())
			.withMessageStartingWith("'limit' × 'window' is too large for exact arithmetic with LEAKY_BUCKET (limit 999983, "
					+ "window '1d', burst 1099511627776)");
	}

	@Test
	void aSlidingLogTooLongForOneDecisionToReadIsRejectedInFavourOfTheSlidingCounter() {
		RateLimitPolicy.Builder log = RateLimitPolicy.builder("p").algorithm(Algorithm.SLIDING_LOG);
		assertThatIllegalArgumentException().isThrownBy(() -> log.limit(20_000).window(Duration.ofMinutes(1)).build())
			.withMessageContaining("'limit' 20000 per '1m' is too large for SLIDING_LOG")
			.withMessageContaining("up to 20000 per key, more than 10000")
			.withMessageContaining("use SLIDING_COUNTER");
		// The log holds one entry per admitted millisecond, so a huge limit over a short window is fine.
		assertThat(log.limit(1_000_000_000).window(Duration.ofSeconds(1)).build().limit()).isEqualTo(1_000_000_000);
		assertThat(log.limit(10_000).window(Duration.ofHours(1)).build().limit()).isEqualTo(10_000);
	}

	@Test
	void describesHowItCounts() {
		assertThat(RateLimitPolicy.builder("p").limit(60).window(Duration.ofMinutes(1)).build().describe())
			.isEqualTo("FIXED 60 per 1m");
		assertThat(RateLimitPolicy.builder("p").algorithm(Algorithm.TOKEN_BUCKET).limit(10).burst(20L).window(Duration.ofSeconds(1)).build().describe())
			.isEqualTo("TOKEN_BUCKET 10 per 1s, burst 20");
	}

	@Test
	void roundsDelaysUpToWholeSeconds() {
		assertThat(Durations.toSecondsRoundedUp(0)).isZero();
		assertThat(Durations.toSecondsRoundedUp(1)).isEqualTo(1);
		assertThat(Durations.toSecondsRoundedUp(1000)).isEqualTo(1);
		assertThat(Durations.toSecondsRoundedUp(1001)).isEqualTo(2);
		assertThat(Decision.rejected(1, 0, 0, 1).retryAfterSeconds()).isEqualTo(1);
		assertThat(Decision.rejected(1, 0, 5_000, Decision.NEVER).retryAfterSeconds()).isEqualTo(5);
	}

}
