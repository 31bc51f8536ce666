package io.github.ratelimit.memory;

import io.github.ratelimit.CalendarWindow;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;

/**
 * The state of an algorithm that counts windows: a calendar window's on its window time (see
 * {@link CalendarWindow}), the decision's durations turned back into milliseconds.
 */
abstract class WindowState extends KeyState {

	WindowState(String key) {
		super(key);
	}

	@Override
	final Decision acquire(RateLimitPolicy policy, long now, long cost) {
		CalendarWindow calendar = policy.calendar();
		if (calendar == null) {
			return decide(policy, now, cost);
		}
		long windowNow = calendar.windowTime(now);
		return calendar.toEpochTime(decide(policy, windowNow, cost), windowNow, now);
	}

	/** Decide at {@code now} on the policy's window time. */
	abstract Decision decide(RateLimitPolicy policy, long now, long cost);

	/**
	 * Return the time the windows of a policy are counted on: its calendar window's window time, if it has one.
	 * @param policy the policy
	 * @param epochMillis milliseconds since the epoch
	 * @return the time to count windows at
	 */
	static long windowTime(RateLimitPolicy policy, long epochMillis) {
		CalendarWindow calendar = policy.calendar();
		return (calendar != null) ? calendar.windowTime(epochMillis) : epochMillis;
	}

	/**
	 * Return the instant a time of {@link #windowTime} comes, for expiries.
	 * @param policy the policy
	 * @param windowTime the time on the policy's window time
	 * @return milliseconds since the epoch
	 */
	static long epochMillis(RateLimitPolicy policy, long windowTime) {
		CalendarWindow calendar = policy.calendar();
		// A state that never admitted anything has a start far before the epoch, with no calendar date.
		return (calendar != null && windowTime > 0) ? calendar.epochMillis(windowTime) : windowTime;
	}

}
