package io.github.ratelimit.web;

import java.time.Duration;
import java.util.List;
import java.util.Set;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.web.RateLimitHeaderStyle.ResetFormat;
import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletResponse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class StandardRateLimitHeadersWriterTests {

	private static final long NOW = 1_900_000_000_000L;

	private final RateLimitPolicy perMinute = policy("per-minute", 10, Duration.ofMinutes(1));

	private final RateLimitPolicy perDay = policy("per-day", 1000, Duration.ofDays(1));

	@Test
	void draft6IsTheDefaultWithDeltaSeconds() {
		MockHttpServletResponse response = write(new StandardRateLimitHeadersWriter(),
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
		MockHttpServletResponse response = write(new StandardRateLimitHeadersWriter(),
				applied(this.perMinute, Decision.rejected(10, 0, 120_000, 90_000)));
		assertThat(response.getHeader("Retry-After")).isEqualTo("60");
		MockHttpServletResponse shorter = write(new StandardRateLimitHeadersWriter(),
				applied(this.perMinute, Decision.rejected(10, 0, 30_000, 12_300)));
		assertThat(shorter.getHeader("Retry-After")).isEqualTo("13");
	}

	@Test
	void retryAfterOfAnUnavailableStoreIsTheCircuitBreakersWaitWhateverTheWindow() {
		MockHttpServletResponse response = write(new StandardRateLimitHeadersWriter(),
				applied(RateLimitPolicy.builder("short").limit(1).window(Duration.ofSeconds(1)).build(),
						new Decision(false, 1, 0, 5_000, 5_000, Decision.Origin.FAIL_CLOSED)));
		assertThat(response.getHeader("Retry-After")).isEqualTo("5");
	}

	@Test
	void draft10ListsEveryPolicyMostRestrictiveFirstAsStructuredFields() {
		MockHttpServletResponse response = write(writer(Set.of(RateLimitHeaderStyle.DRAFT_10)),
				applied(this.perMinute, Decision.allowed(10, 2, 30_000)),
				applied(this.perDay, Decision.allowed(1000, 990, 86_400_000)));
		List<StructuredFieldList.Member> policies = StructuredFieldList.parse(response.getHeader("RateLimit-Policy"));
		assertThat(policies).extracting(StructuredFieldList.Member::value).containsExactly("per-minute", "per-day");
		assertThat(policies.get(0).parameters()).containsEntry("q", 10L).containsEntry("w", 60L);
		assertThat(policies.get(1).parameters()).containsEntry("q", 1000L).containsEntry("w", 86_400L);
		List<StructuredFieldList.Member> states = StructuredFieldList.parse(response.getHeader("RateLimit"));
		assertThat(states).extracting(StructuredFieldList.Member::value).containsExactly("per-minute", "per-day");
		assertThat(states.get(0).parameters()).containsEntry("r", 2L).containsEntry("t", 30L);
		assertThat(states.get(1).parameters()).containsEntry("r", 990L).containsEntry("t", 86_400L);
		assertThat(response.getHeaderNames()).doesNotContain("RateLimit-Limit", "X-RateLimit-Limit");
	}

	@Test
	void draft10PolicyNamesThatAreNotStringContentAreEscapedOrPercentEncodedAndParseBack() {
		for (String name : List.of("say \"hi\"", "back\\slash", "100%", "ユーザー", "emoji 😀", "tab\there")) {
			MockHttpServletResponse response = write(writer(Set.of(RateLimitHeaderStyle.DRAFT_10)),
					applied(policy(name, 5, Duration.ofSeconds(1)), Decision.allowed(5, 4, 1_000)));
			StructuredFieldList.Member member = StructuredFieldList.parse(response.getHeader("RateLimit-Policy"))
				.get(0);
			assertThat(member.decodedValue()).isEqualTo(name);
			assertThat(StructuredFieldList.parse(response.getHeader("RateLimit")).get(0).decodedValue())
				.isEqualTo(name);
		}
	}

	@Test
	void draft10WindowsShorterThanASecondAreWrittenAsOneSecondAndIntegersStayInRange() {
		RateLimitPolicy subSecond = policy("fast", 3, Duration.ofMillis(250));
		MockHttpServletResponse response = write(writer(Set.of(RateLimitHeaderStyle.DRAFT_10)),
				applied(subSecond, Decision.allowed(3, 2, 250)));
		assertThat(StructuredFieldList.parse(response.getHeader("RateLimit-Policy")).get(0).parameters())
			.containsEntry("w", 1L);
	}

	@Test
	void xRatelimitResetIsDeltaSecondsOrEpochSeconds() {
		Decision decision = Decision.allowed(10, 3, 12_001);
		MockHttpServletResponse delta = write(writer(Set.of(RateLimitHeaderStyle.X_RATELIMIT)),
				applied(this.perMinute, decision));
		assertThat(delta.getHeader("X-RateLimit-Limit")).isEqualTo("10");
		assertThat(delta.getHeader("X-RateLimit-Remaining")).isEqualTo("3");
		assertThat(delta.getHeader("X-RateLimit-Reset")).isEqualTo("13");
		MockHttpServletResponse epoch = write(
				new StandardRateLimitHeadersWriter(Set.of(RateLimitHeaderStyle.X_RATELIMIT), ResetFormat.EPOCH_SECONDS,
						() -> NOW),
				applied(this.perMinute, decision));
		assertThat(epoch.getHeader("X-RateLimit-Reset")).isEqualTo(Long.toString((NOW + 12_001 + 999) / 1000));
		assertThat(epoch.getHeaderNames()).doesNotContain("RateLimit-Limit");
	}

	@Test
	void stylesCombineAndNoneWritesOnlyRetryAfter() {
		Decision rejected = Decision.rejected(10, 0, 20_000, 5_000);
		MockHttpServletResponse all = write(
				writer(Set.of(RateLimitHeaderStyle.DRAFT_6, RateLimitHeaderStyle.DRAFT_10,
						RateLimitHeaderStyle.X_RATELIMIT)),
				applied(this.perMinute, rejected));
		assertThat(all.getHeaderNames()).contains("RateLimit-Limit", "RateLimit-Policy", "RateLimit",
				"X-RateLimit-Limit", "Retry-After");
		MockHttpServletResponse none = write(writer(Set.of(RateLimitHeaderStyle.NONE)),
				applied(this.perMinute, rejected));
		assertThat(none.getHeaderNames()).containsExactly("Retry-After");
		assertThat(none.getHeader("Retry-After")).isEqualTo("5");
	}

	@Test
	void aDecisionTheStoreCouldNotMakeWritesNoCounters() {
		Decision failOpen = new Decision(true, 10, 0, 0, 0, Decision.Origin.FAIL_OPEN);
		MockHttpServletResponse response = write(
				writer(Set.of(RateLimitHeaderStyle.DRAFT_6, RateLimitHeaderStyle.DRAFT_10)),
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

	private static MockHttpServletResponse write(RateLimitHeadersWriter writer, AppliedRateLimit... limits) {
		MockHttpServletResponse response = new MockHttpServletResponse();
		writer.writeHeaders(response, List.of(limits));
		return response;
	}

	private static AppliedRateLimit applied(RateLimitPolicy policy, Decision decision) {
		return new AppliedRateLimit(policy, decision);
	}

	private static RateLimitPolicy policy(String name, long limit, Duration window) {
		return RateLimitPolicy.builder(name).algorithm(Algorithm.FIXED).limit(limit).window(window).build();
	}

}
