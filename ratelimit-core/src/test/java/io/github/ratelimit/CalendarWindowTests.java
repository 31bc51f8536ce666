package io.github.ratelimit;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.Random;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class CalendarWindowTests {

	private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

	@Test
	void eachPeriodStartsAtAWholeLengthOfWindowTimeAtTheZonesMidnight() {
		CalendarWindow month = CalendarWindow.of(CalendarWindow.Period.MONTH, BERLIN);
		long february = LocalDate.of(2030, 2, 1).atStartOfDay(BERLIN).toInstant().toEpochMilli();
		long march = LocalDate.of(2030, 3, 1).atStartOfDay(BERLIN).toInstant().toEpochMilli();
		long windowTime = month.windowTime(february);
		assertThat(windowTime % month.windowMillis()).isZero();
		assertThat(month.windowTime(march)).isEqualTo(windowTime + month.windowMillis());
		assertThat(month.windowTime(march - 1)).isLessThan(windowTime + month.windowMillis());
		assertThat(month.epochMillis(windowTime)).isEqualTo(february);
		assertThat(month.epochMillis(windowTime + month.windowMillis())).isEqualTo(march);
		// Half of February's 28 days is half of its window time.
		assertThat(month.windowTime(february + Duration.ofDays(14).toMillis()))
			.isEqualTo(windowTime + month.windowMillis() / 2);
	}

	@Test
	void weeksStartOnMondayAndDaysFollowTheZonesClockChanges() {
		CalendarWindow week = CalendarWindow.of(CalendarWindow.Period.WEEK, BERLIN);
		long wednesday = Instant.parse("2030-05-15T12:00:00Z").toEpochMilli();
		long monday = LocalDate.of(2030, 5, 13).atStartOfDay(BERLIN).toInstant().toEpochMilli();
		assertThat(week.epochMillis(week.windowTime(wednesday) / week.windowMillis() * week.windowMillis()))
			.isEqualTo(monday);
		CalendarWindow day = CalendarWindow.of(CalendarWindow.Period.DAY, BERLIN);
		long shortDay = LocalDate.of(2030, 3, 31).atStartOfDay(BERLIN).toInstant().toEpochMilli();
		long start = day.windowTime(shortDay);
		assertThat(day.epochMillis(start + day.windowMillis()) - shortDay).isEqualTo(Duration.ofHours(23).toMillis());
		long longDay = LocalDate.of(2030, 10, 27).atStartOfDay(BERLIN).toInstant().toEpochMilli();
		assertThat(day.epochMillis(day.windowTime(longDay) + day.windowMillis()) - longDay)
			.isEqualTo(Duration.ofHours(25).toMillis());
	}

	@Test
	void windowTimeNeverRunsBackwardsAndMapsBackToTheEarliestInstantThatReachesIt() {
		Random random = new Random(7);
		for (CalendarWindow.Period period : CalendarWindow.Period.values()) {
			CalendarWindow window = CalendarWindow.of(period, ZoneId.of("America/Sao_Paulo"));
			long previous = Long.MIN_VALUE;
			long instant = Instant.parse("2024-01-01T00:00:00Z").toEpochMilli();
			for (int i = 0; i < 20_000; i++) {
				instant += random.nextInt(3_600_000);
				long windowTime = window.windowTime(instant);
				assertThat(windowTime).isGreaterThanOrEqualTo(previous);
				previous = windowTime;
				long back = window.epochMillis(windowTime);
				assertThat(back).isLessThanOrEqualTo(instant);
				assertThat(window.windowTime(back)).isEqualTo(windowTime);
				assertThat(back == instant || window.windowTime(back - 1) < windowTime).isTrue();
			}
		}
	}

	@Test
	void noPeriodOfAnyZoneIsLongerThanItsWindowTimeFrom1970To2100() {
		// Expiries counted on window time are never shorter than the real ones only if no period is longer.
		Instant from = Instant.parse("1970-01-01T00:00:00Z");
		Instant to = Instant.parse("2100-01-01T00:00:00Z");
		int checked = 0;
		for (String id : ZoneId.getAvailableZoneIds()) {
			ZoneId zone = ZoneId.of(id);
			ZoneRules rules = zone.getRules();
			ZoneOffsetTransition transition = rules.nextTransition(from);
			while (transition != null && transition.getInstant().isBefore(to)) {
				long at = transition.toEpochSecond() * 1000;
				for (CalendarWindow.Period period : CalendarWindow.Period.values()) {
					CalendarWindow window = CalendarWindow.of(period, zone);
					long start = window.windowTime(at) / window.windowMillis() * window.windowMillis();
					long length = window.epochMillis(start + window.windowMillis()) - window.epochMillis(start);
					assertThat(length).as("%s %s at %s", period, id, transition)
						.isLessThanOrEqualTo(window.windowMillis());
					checked++;
				}
				transition = rules.nextTransition(transition.getInstant());
			}
		}
		assertThat(checked).isGreaterThan(10_000);
	}

	@Test
	void aCalendarWindowAppliesToTheWindowAlgorithmsOnlyAndTakesNoLease() {
		CalendarWindow month = CalendarWindow.of(CalendarWindow.Period.MONTH, ZoneOffset.UTC);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimitPolicy.builder("p")
				.algorithm(Algorithm.TOKEN_BUCKET)
				.limit(1)
				.window(month)
				.build())
			.withMessageContaining("'1M in Z'")
			.withMessageContaining("FIXED and SLIDING_COUNTER only, not to TOKEN_BUCKET");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimitPolicy.builder("p").limit(10).window(month).lease(5).build())
			.withMessageContaining("'lease' cannot apply to a calendar window");
		RateLimitPolicy policy = RateLimitPolicy.builder("p").limit(10_000).window(month).build();
		assertThat(policy.describe()).isEqualTo("FIXED 10000 per 1M in Z");
		assertThat(policy.toBuilder().build()).isEqualTo(policy);
		assertThat(policy).isNotEqualTo(policy.toBuilder()
			.window(CalendarWindow.of(CalendarWindow.Period.MONTH, BERLIN))
			.build());
	}

}
