package io.github.ratelimit;

import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.temporal.TemporalAdjusters;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * A window that starts on a calendar boundary in a time zone: a day from midnight, a week from Monday's midnight, or
 * a month from the first's midnight, each of its real length (months of 28 to 31 days, days of 23 or 25 hours where
 * daylight saving time changes).
 * <p>
 * The algorithms count windows of one length. So the stores count a calendar window on <em>window time</em>: a
 * clock that runs through every period in the same {@link #windowMillis() length}, period {@code k} being
 * {@code [k·length, (k+1)·length)}, faster in a short period than in a long one. Window time never runs backwards,
 * so the fixed window and the sliding counter keep every bound they promise, per period rather than per length of
 * time. A store converts the time it decides at into window time ({@link #windowTime}) and the durations it answers
 * back into milliseconds ({@link #toEpochTime}); expiries counted on window time are never shorter than the real
 * ones, since no period is longer than the length.
 * <p>
 * Immutable; the last two periods met are remembered, so that most conversions do no calendar arithmetic.
 *
 * @since 0.5.0
 */
public final class CalendarWindow {

	/** The periods a calendar window can have. */
	public enum Period {

		/** From midnight to midnight. */
		DAY(24 + 8, 24),

		/** From Monday's midnight to the next Monday's (ISO weeks). */
		WEEK(7 * 24 + 8, 7 * 24),

		/** From the first day's midnight to the next month's first day's. */
		MONTH(31 * 24 + 8, 30 * 24);

		/**
		 * The length of a period on window time: its longest nominal length plus eight hours, since no zone has
		 * moved its clocks back by more than seven hours at once since 1970 (Antarctica/Vostok in 1994; checked for
		 * every zone from 1970 to 2100 by the tests).
		 */
		private final long windowMillis;

		private final long nominalSeconds;

		Period(long hours, long nominalHours) {
			this.windowMillis = hours * 3_600_000L;
			this.nominalSeconds = nominalHours * 3_600L;
		}

	}

	/** Window time is aligned to the Monday after the epoch for weeks: 1970-01-05 is day 4. */
	private static final long FIRST_MONDAY = 4;

	private final Period period;

	private final ZoneId zone;

	private final long windowMillis;

	/** The period of the last instant converted. */
	private volatile Span last = new Span(Long.MIN_VALUE, 0, 0);

	/** The last other period a window time was converted back in: mostly the next, where resets end. */
	private volatile Span other = new Span(Long.MIN_VALUE, 0, 0);

	private CalendarWindow(Period period, ZoneId zone) {
		this.period = Objects.requireNonNull(period, "period");
		this.zone = Objects.requireNonNull(zone, "zone");
		this.windowMillis = period.windowMillis;
	}

	/**
	 * Return the calendar window of a period in a time zone.
	 * @param period the period
	 * @param zone the time zone its boundaries are in
	 * @return the window
	 */
	public static CalendarWindow of(Period period, ZoneId zone) {
		return new CalendarWindow(period, zone);
	}

	/**
	 * Return the period.
	 * @return the period
	 */
	public Period period() {
		return this.period;
	}

	/**
	 * Return the time zone the periods start in.
	 * @return the zone
	 */
	public ZoneId zone() {
		return this.zone;
	}

	/**
	 * Return the length of every period on window time, in milliseconds: the window the algorithms count with.
	 * @return the length, longer than any real period
	 */
	public long windowMillis() {
		return this.windowMillis;
	}

	/**
	 * Return the length headers announce as the window (the {@code w} of {@code RateLimit-Policy}): 86,400 seconds
	 * for a day, 604,800 for a week and 2,592,000 (30 days) for a month, whatever the current period's real length.
	 * How long is left of it is what the decisions say.
	 * @return the nominal length in seconds
	 */
	public long nominalSeconds() {
		return this.period.nominalSeconds;
	}

	/** Refuse an algorithm that counts no window, and a lease. */
	void checkAppliesTo(Algorithm algorithm, long lease) {
		if (algorithm != Algorithm.FIXED && algorithm != Algorithm.SLIDING_COUNTER) {
			throw new IllegalArgumentException("A calendar window ('" + this + "') applies to FIXED and "
					+ "SLIDING_COUNTER only, not to " + algorithm + ", which counts no window");
		}
		if (lease != 0) {
			throw new IllegalArgumentException("'lease' cannot apply to a calendar window ('" + this + "'): a quota "
					+ "per day, week or month is no hot path a block would save store calls on; drop 'lease'");
		}
	}

	/**
	 * Return the window time of an instant: {@code k·length} at the start of period {@code k}, running evenly
	 * through the period to its end.
	 * @param epochMillis milliseconds since the epoch
	 * @return the window time
	 */
	public long windowTime(long epochMillis) {
		Span span = spanAt(epochMillis);
		return span.index * this.windowMillis + (epochMillis - span.start) * this.windowMillis / span.length();
	}

	/**
	 * Return the earliest instant whose window time is at least the given one.
	 * @param windowTime a window time
	 * @return milliseconds since the epoch
	 */
	public long epochMillis(long windowTime) {
		long index = Math.floorDiv(windowTime, this.windowMillis);
		long offset = windowTime - index * this.windowMillis;
		Span span = spanOf(index);
		long length = span.length();
		return span.start + (offset * length + this.windowMillis - 1) / this.windowMillis;
	}

	/**
	 * Turn the durations of a decision taken at a window time into milliseconds from the instant it was taken at.
	 * @param decision the decision, its durations on window time
	 * @param windowNow the window time it was taken at
	 * @param epochNow the instant that window time belongs to, in milliseconds since the epoch
	 * @return the decision with its durations in milliseconds
	 */
	public Decision toEpochTime(Decision decision, long windowNow, long epochNow) {
		return new Decision(decision.allowed(), decision.limit(), decision.remaining(),
				millisUntil(decision.resetAfterMillis(), windowNow, epochNow),
				(decision.retryAfterMillis() == Decision.NEVER) ? Decision.NEVER
						: millisUntil(decision.retryAfterMillis(), windowNow, epochNow),
				millisUntil(decision.nextUnitAfterMillis(), windowNow, epochNow), decision.origin());
	}

	/**
	 * Return the milliseconds from an instant until a duration on window time has passed from its window time.
	 * @param windowDelay the duration on window time, not negative
	 * @param windowNow the window time of the instant
	 * @param epochNow the instant, in milliseconds since the epoch
	 * @return the milliseconds, not negative
	 */
	public long millisUntil(long windowDelay, long windowNow, long epochNow) {
		return (windowDelay <= 0) ? 0 : Math.max(0, epochMillis(windowNow + windowDelay) - epochNow);
	}

	private Span spanAt(long epochMillis) {
		Span span = this.last;
		if (epochMillis >= span.start && epochMillis < span.end) {
			return span;
		}
		LocalDate date = Instant.ofEpochMilli(epochMillis).atZone(this.zone).toLocalDate();
		LocalDate first = switch (this.period) {
			case DAY -> date;
			case WEEK -> date.with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY));
			case MONTH -> date.withDayOfMonth(1);
		};
		span = span(first);
		this.last = span;
		return span;
	}

	private Span spanOf(long index) {
		Span span = this.last;
		if (span.index == index) {
			return span;
		}
		span = this.other;
		if (span.index == index) {
			return span;
		}
		span = span(switch (this.period) {
			case DAY -> LocalDate.ofEpochDay(index);
			case WEEK -> LocalDate.ofEpochDay(FIRST_MONDAY + 7 * index);
			case MONTH -> LocalDate.of(1970 + (int) Math.floorDiv(index, 12), (int) Math.floorMod(index, 12) + 1, 1);
		});
		this.other = span;
		return span;
	}

	private Span span(LocalDate first) {
		LocalDate next = switch (this.period) {
			case DAY -> first.plusDays(1);
			case WEEK -> first.plusWeeks(1);
			case MONTH -> first.plusMonths(1);
		};
		long index = switch (this.period) {
			case DAY -> first.toEpochDay();
			case WEEK -> Math.floorDiv(first.toEpochDay() - FIRST_MONDAY, 7);
			case MONTH -> (first.getYear() - 1970L) * 12 + first.getMonthValue() - 1;
		};
		return new Span(index, startOf(first), startOf(next));
	}

	private long startOf(LocalDate date) {
		// The first instant of the date: midnight, or the end of a gap that skips it.
		return date.atStartOfDay(this.zone).toInstant().toEpochMilli();
	}

	/**
	 * Two calendar windows are equal when their periods start at the same instants: same period, same zone.
	 */
	@Override
	public boolean equals(@Nullable Object obj) {
		return obj instanceof CalendarWindow other && this.period == other.period && this.zone.equals(other.zone);
	}

	@Override
	public int hashCode() {
		return this.period.hashCode() * 31 + this.zone.hashCode();
	}

	/**
	 * Describe the window as it is configured: {@code 1M in Europe/Berlin}.
	 * @return the description
	 */
	@Override
	public String toString() {
		return switch (this.period) {
			case DAY -> "1d";
			case WEEK -> "1w";
			case MONTH -> "1M";
		} + " in " + this.zone;
	}

	/** Period {@code index}, from {@code start} to {@code end} in milliseconds since the epoch. */
	private record Span(long index, long start, long end) {

		long length() {
			// A period a zone skipped whole (a date it jumped over) has no length: count it as one millisecond.
			return Math.max(1, this.end - this.start);
		}

	}

}
