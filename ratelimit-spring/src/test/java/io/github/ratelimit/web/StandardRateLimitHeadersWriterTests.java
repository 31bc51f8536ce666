package io.github.ratelimit.web;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.web.RateLimitHeaderStyle.ResetFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class StandardRateLimitHeadersWriterTests {

	private static final long NOW = 1_900_000_000_000L;

	private final RateLimitPolicy perMinute = policy("per-minute", 10, Duration.ofMinutes(1));

	private final RateLimitPolicy perDay = policy("per-day", 1000, Duration.ofDays(1));

	@Test
	void draft6IsTheDefaultWithDeltaSeconds() {
		Written response = write(new StandardRateLimitHeadersWriter(),
				applied(this.perMinute, Decision.allowed(10, 7, 42_500)));
		assertThat(response.getHeader("RateLimit-Limit")).isEqualTo("10");
		assertThat(response.getHeader("RateLimit-Remaining")).isEqualTo("7");
		assertThat(response.getHeader("RateLimit-Reset")).isEqualTo("43");
		assertThat(response.getHeaderNames()).doesNotContain("RateLimit", "RateLimit-Policy", "X-RateLimit-Limit",
				"Retry-After");
	}

	@Test
	void retryAfterIsNeverMoreThanThePolicysWindow() {
		// A sliding counter's exact wait can reach 1.5 windows; a bucket's, for a cost above its rate, many windows.
		Written response = write(new StandardRateLimitHeadersWriter(),
				applied(this.perMinute, Decision.rejected(10, 0, 120_000, 90_000)));
		assertThat(response.getHeader("Retry-After")).isEqualTo("60");
		Written shorter = write(new StandardRateLimitHeadersWriter(),
				applied(this.perMinute, Decision.rejected(10, 0, 30_000, 12_300)));
		assertThat(shorter.getHeader("Retry-After")).isEqualTo("13");
	}

	@Test
	void retryAfterOfAnUnavailableStoreIsTheCircuitBreakersWaitWhateverTheWindow() {
		Written response = write(new StandardRateLimitHeadersWriter(),
				applied(RateLimitPolicy.builder("short").limit(1).window(Duration.ofSeconds(1)).build(),
						new Decision(false, 1, 0, 5_000, 5_000, Decision.Origin.FAIL_CLOSED)));
		assertThat(response.getHeader("Retry-After")).isEqualTo("5");
	}

	@ParameterizedTest
	@EnumSource(names = { "DRAFT_11", "DRAFT_10" })
	void draft11ListsEveryPolicyMostRestrictiveFirstWithItsEffectiveWindowAndDraft10IsTheSame(
			RateLimitHeaderStyle style) {
		Written response = write(writer(Set.of(style)),
				applied(this.perMinute, Decision.allowed(10, 2, 30_000, 30_000)),
				applied(this.perDay, Decision.allowed(1000, 990, 86_400_000, 3_600_999)));
		List<StructuredFieldList.Member> policies = StructuredFieldList.parse(response.getHeader("RateLimit-Policy"));
		assertThat(policies).extracting(StructuredFieldList.Member::value).containsExactly("per-minute", "per-day");
		assertThat(policies.get(0).parameters()).containsEntry("q", 10L).containsEntry("w", 60L);
		assertThat(policies.get(1).parameters()).containsEntry("q", 1000L).containsEntry("w", 86_400L);
		List<StructuredFieldList.Member> states = StructuredFieldList.parse(response.getHeader("RateLimit"));
		assertThat(states).extracting(StructuredFieldList.Member::value).containsExactly("per-minute", "per-day");
		// t is the effective window, rounded down: within it no more than r can pass.
		assertThat(states.get(0).parameters()).containsEntry("r", 2L).containsEntry("t", 30L);
		assertThat(states.get(1).parameters()).containsEntry("r", 990L).containsEntry("t", 3_600L);
		assertThat(response.getHeaderNames()).doesNotContain("RateLimit-Limit", "X-RateLimit-Limit");
	}

	@Test
	void onARejectionTheEffectiveWindowIsNeverLaterThanRetryAfter() {
		// An empty token bucket of 10 a minute: full again in a minute, the next token in 6 s.
		RateLimitPolicy bucket = RateLimitPolicy.builder("bucket").algorithm(Algorithm.TOKEN_BUCKET).limit(10)
			.window(Duration.ofMinutes(1)).build();
		Written response = write(writer(Set.of(RateLimitHeaderStyle.DRAFT_11)),
				applied(bucket, Decision.rejected(10, 0, 60_000, 6_000, 6_000)));
		Map<String, Long> state = StructuredFieldList.parse(response.getHeader("RateLimit")).get(0).parameters();
		assertThat(state).containsEntry("r", 0L).containsEntry("t", 6L);
		assertThat(Long.parseLong(response.getHeader("Retry-After"))).isGreaterThanOrEqualTo(state.get("t"));
		// A wait capped at the window: t is capped with it.
		RateLimitPolicy counter = RateLimitPolicy.builder("counter").algorithm(Algorithm.SLIDING_COUNTER).limit(2)
			.window(Duration.ofSeconds(10)).build();
		Written capped = write(writer(Set.of(RateLimitHeaderStyle.DRAFT_11)),
				applied(counter, Decision.rejected(2, 0, 20_000, 15_000, 15_000)));
		assertThat(capped.getHeader("Retry-After")).isEqualTo("10");
		assertThat(StructuredFieldList.parse(capped.getHeader("RateLimit")).get(0).parameters()).containsEntry("t",
				10L);
	}

	@Test
	void anApplicationWideQuotaIsLeftOutOfTheHeadersUnlessShownAndItsRejectionStillSaysWhenToRetry() {
		RateLimitPolicy account = policy("account", 10_000, Duration.ofSeconds(1));
		AppliedRateLimit perClient = applied(this.perMinute, Decision.allowed(10, 7, 30_000, 30_000));
		AppliedRateLimit shared = new AppliedRateLimit(account, Decision.allowed(10_000, 3, 1_000, 1), true);
		Set<RateLimitHeaderStyle> styles = Set.of(RateLimitHeaderStyle.DRAFT_6, RateLimitHeaderStyle.DRAFT_11);
		Written hidden = write(writer(styles), shared, perClient);
		assertThat(hidden.getHeader("RateLimit-Remaining")).isEqualTo("7");
		assertThat(StructuredFieldList.parse(hidden.getHeader("RateLimit")))
			.extracting(StructuredFieldList.Member::value)
			.containsExactly("per-minute");
		Written shown = write(
				new StandardRateLimitHeadersWriter(styles, ResetFormat.DELTA_SECONDS, () -> NOW, true), shared,
				perClient);
		assertThat(shown.getHeader("RateLimit-Remaining")).isEqualTo("3");
		Written rejected = write(writer(styles),
				new AppliedRateLimit(account, Decision.rejected(10_000, 0, 1_000, 1_000, 1), true));
		assertThat(rejected.getHeaderNames()).containsExactly("Retry-After");
		assertThat(rejected.getHeader("Retry-After")).isEqualTo("1");
	}

	@Test
	void draft11PolicyNamesThatAreNotStringContentAreEscapedOrPercentEncodedAndParseBack() {
		for (String name : List.of("say \"hi\"", "back\\slash", "100%", "ユーザー", "emoji 😀", "tab\there")) {
			Written response = write(writer(Set.of(RateLimitHeaderStyle.DRAFT_11)),
					applied(policy(name, 5, Duration.ofSeconds(1)), Decision.allowed(5, 4, 1_000)));
			StructuredFieldList.Member member = StructuredFieldList.parse(response.getHeader("RateLimit-Policy"))
				.get(0);
			assertThat(member.decodedValue()).isEqualTo(name);
			assertThat(StructuredFieldList.parse(response.getHeader("RateLimit")).get(0).decodedValue())
				.isEqualTo(name);
		}
	}

	@Test
	void draft11WindowsShorterThanASecondAreWrittenAsOneSecondAndIntegersStayInRange() {
		RateLimitPolicy subSecond = policy("fast", 3, Duration.ofMillis(250));
		Written response = write(writer(Set.of(RateLimitHeaderStyle.DRAFT_11)),
				applied(subSecond, Decision.allowed(3, 2, 250)));
		assertThat(StructuredFieldList.parse(response.getHeader("RateLimit-Policy")).get(0).parameters())
			.containsEntry("w", 1L);
	}

	@Test
	void xRatelimitResetIsDeltaSecondsOrEpochSeconds() {
		Decision decision = Decision.allowed(10, 3, 12_001);
		Written delta = write(writer(Set.of(RateLimitHeaderStyle.X_RATELIMIT)),
				applied(this.perMinute, decision));
		assertThat(delta.getHeader("X-RateLimit-Limit")).isEqualTo("10");
		assertThat(delta.getHeader("X-RateLimit-Remaining")).isEqualTo("3");
		assertThat(delta.getHeader("X-RateLimit-Reset")).isEqualTo("13");
		Written epoch = write(
				new StandardRateLimitHeadersWriter(Set.of(RateLimitHeaderStyle.X_RATELIMIT), ResetFormat.EPOCH_SECONDS,
						() -> NOW),
				applied(this.perMinute, decision));
		assertThat(epoch.getHeader("X-RateLimit-Reset")).isEqualTo(Long.toString((NOW + 12_001 + 999) / 1000));
		assertThat(epoch.getHeaderNames()).doesNotContain("RateLimit-Limit");
	}

	@Test
	void stylesCombineAndNoneWritesOnlyRetryAfter() {
		Decision rejected = Decision.rejected(10, 0, 20_000, 5_000);
		Written all = write(
				writer(Set.of(RateLimitHeaderStyle.DRAFT_6, RateLimitHeaderStyle.DRAFT_11,
						RateLimitHeaderStyle.X_RATELIMIT)),
				applied(this.perMinute, rejected));
		assertThat(all.getHeaderNames()).contains("RateLimit-Limit", "RateLimit-Policy", "RateLimit",
				"X-RateLimit-Limit", "Retry-After");
		Written none = write(writer(Set.of(RateLimitHeaderStyle.NONE)),
				applied(this.perMinute, rejected));
		assertThat(none.getHeaderNames()).containsExactly("Retry-After");
		assertThat(none.getHeader("Retry-After")).isEqualTo("5");
	}

	@Test
	void aDecisionTheStoreCouldNotMakeWritesNoCounters() {
		Decision failOpen = new Decision(true, 10, 0, 0, 0, Decision.Origin.FAIL_OPEN);
		Written response = write(
				writer(Set.of(RateLimitHeaderStyle.DRAFT_6, RateLimitHeaderStyle.DRAFT_11)),
				applied(this.perMinute, failOpen));
		assertThat(response.getHeaderNames()).isEmpty();
	}

	@Test
	void noneCannotBeCombined() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> writer(Set.of(RateLimitHeaderStyle.NONE, RateLimitHeaderStyle.DRAFT_6)))
			.withMessageContaining("cannot combine NONE");
	}

	private static StandardRateLimitHeadersWriter writer(Set<RateLimitHeaderStyle> styles) {
		return new StandardRateLimitHeadersWriter(styles, ResetFormat.DELTA_SECONDS, () -> NOW);
	}

	private static Written write(RateLimitHeadersWriter writer, AppliedRateLimit... limits) {
		HttpHeaders headers = new HttpHeaders();
		writer.writeHeaders(headers, List.of(limits));
		return new Written(headers);
	}

	/** The headers written, read as from a response. */
	private record Written(HttpHeaders headers) {

		@org.jspecify.annotations.Nullable String getHeader(String name) {
			return this.headers.getFirst(name);
		}

		java.util.Collection<String> getHeaderNames() {
			return this.headers.headerNames();
		}

	}

	private static AppliedRateLimit applied(RateLimitPolicy policy, Decision decision) {
		return new AppliedRateLimit(policy, decision);
	}

	private static RateLimitPolicy policy(String name, long limit, Duration window) {
		return RateLimitPolicy.builder(name).algorithm(Algorithm.FIXED).limit(limit).window(window).build();
	}

}
