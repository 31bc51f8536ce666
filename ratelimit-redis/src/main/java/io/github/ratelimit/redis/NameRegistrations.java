package io.github.ratelimit.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

/**
 * What one policy name has to say of its variants' parameter sets: the variants due, at most one call in flight, what
 * comes meanwhile waiting for the next. Refreshes wait until {@link PolicyVersions#BATCH_MILLIS} after the last call
 * (or a full batch); a registration a decision waits for goes as soon as no call is in flight. Guarded by its own
 * monitor.
 */
final class NameRegistrations {

	final List<Registration> queue = new ArrayList<>();

	/** Whether a decision waits for something queued. */
	boolean urgent;

	boolean inFlight;

	/** When the last call started, on the registry's local clock. */
	long lastSent = Long.MIN_VALUE / 2;

	/** Whether the batch was dropped from the map: registrations go to a new one. */
	boolean dropped;

	/** Return the registrations to send now, or {@code null} if none is to go yet. */
	@Nullable List<Registration> take(long now) {
		if (this.inFlight || this.queue.isEmpty()) {
			return null;
		}
		boolean gapOver = now - this.lastSent >= PolicyVersions.BATCH_MILLIS || now < this.lastSent;
		if (!this.urgent && !gapOver && this.queue.size() < PolicyVersions.MAX_BATCH) {
			return null;
		}
		int size = Math.min(this.queue.size(), PolicyVersions.MAX_BATCH);
		List<Registration> due = new ArrayList<>(this.queue.subList(0, size));
		this.queue.subList(0, size).clear();
		this.urgent &= !this.queue.isEmpty();
		this.inFlight = true;
		this.lastSent = now;
		return due;
	}

	/** One variant's set to be said, from one instance, and when it was asked for (on the registry's local clock). */
	static final class Registration {

		final PolicyVersions.View view;

		final long at;

		final CompletableFuture<@Nullable Void> done = new CompletableFuture<>();

		Registration(PolicyVersions.View view, long at) {
			this.view = view;
			this.at = at;
		}

	}

}
