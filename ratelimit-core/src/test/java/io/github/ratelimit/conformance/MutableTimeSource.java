package io.github.ratelimit.conformance;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.TimeSource;

/**
 * A clock that only moves when told to.
 */
public final class MutableTimeSource implements TimeSource {

	private final AtomicLong millis;

	private MutableTimeSource(long millis) {
		this.millis = new AtomicLong(millis);
	}

	public static MutableTimeSource at(String instant) {
		return new MutableTimeSource(Instant.parse(instant).toEpochMilli());
	}

	public static MutableTimeSource atMillis(long millis) {
		return new MutableTimeSource(millis);
	}

	@Override
	public long currentTimeMillis() {
		return this.millis.get();
	}

	public void advance(Duration duration) {
		this.millis.addAndGet(duration.toMillis());
	}

	public void advanceMillis(long millis) {
		this.millis.addAndGet(millis);
	}

	public void set(long millis) {
		this.millis.set(millis);
	}

	/**
	 * Move to the next multiple of {@code window} after the current time, plus {@code offset}.
	 */
	public void alignTo(Duration window, long offsetMillis) {
		long w = window.toMillis();
		long now = this.millis.get();
		this.millis.set(now - Math.floorMod(now, w) + w + offsetMillis);
	}

}
