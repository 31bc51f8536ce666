package io.github.ratelimit.redis;

import java.time.Duration;
import java.time.ZoneId;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarWindow;
import io.github.ratelimit.RateLimitPolicy;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an instance says of its parameter sets, read back by the others as the policies they count with.
 */
class PolicyVersionsFieldTests {

	@Test
	void aCalendarWindowIsReadBackWithItsPeriodAndZone() {
		for (String zone : new String[] { "Europe/Berlin", "UTC+01:00" }) {
			RateLimitPolicy monthly = RateLimitPolicy.builder("quota")
				.variant("gold:plan|1")
				.algorithm(Algorithm.SLIDING_COUNTER)
				.limit(10_000)
				.window(CalendarWindow.of(CalendarWindow.Period.MONTH, ZoneId.of(zone)))
				.build();
			RateLimitPolicy read = PolicyVersions.parse(PolicyVersions.field(monthly), monthly);
			assertThat(read).isEqualTo(monthly);
			assertThat(read.calendar()).isEqualTo(monthly.calendar());
		}
	}

	@Test
	void aWindowOfTheSameLengthIsNoCalendarWindow() {
		RateLimitPolicy plain = RateLimitPolicy.builder("quota").limit(5).window(Duration.ofHours(24 + 8)).build();
		RateLimitPolicy read = PolicyVersions.parse(PolicyVersions.field(plain), plain);
		assertThat(read).isEqualTo(plain);
		assertThat(read.calendar()).isNull();
	}

}
