package io.github.ratelimit.limiter;

import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;

/**
 * The units of one block as they are admitted: taken and given back with a compare-and-set, so that the requests
 * of a hot key do not queue on a lock (on a busy core a lock's holder is preempted, and every other request of the
 * key then sleeps).
 */
final class LeaseGrant {

	/** Units not yet admitted. */
	final AtomicLong left;

	/** This instance's monotonic time the block was taken at (a wall clock stepped back must not stretch it). */
	final long takenAt;

	/** This instance's monotonic time at which what is left lapses. */
	final long expiresAt;

	/** The store's time the block was counted at: what a unit given back is matched by. */
	final long countedAt;

	/** What the store said was left once it had counted the block. */
	final long storeRemaining;

	final long resetAt;

	final long nextUnitAt;

	volatile boolean dropped;

	LeaseGrant(long left, long takenAt, long expiresAt, long countedAt, long storeRemaining, long resetAt,
			long nextUnitAt) {
		this.left = new AtomicLong(left);
		this.takenAt = takenAt;
		this.expiresAt = expiresAt;
		this.countedAt = countedAt;
		this.storeRemaining = storeRemaining;
		this.resetAt = resetAt;
		this.nextUnitAt = nextUnitAt;
	}

	boolean live(long now) {
		return !this.dropped && now >= this.takenAt && now < this.expiresAt;
	}

	/** Take {@code cost} units if the grant is live and holds them; whether it did. */
	boolean take(long cost, long now) {
		if (!live(now)) {
			return false;
		}
		long left;
		do {
			left = this.left.get();
			if (left < cost) {
				return false;
			}
		}
		while (!this.left.compareAndSet(left, left - cost));
		return true;
	}

	/** The decision of units admitted from this grant: what the store had left then, with what is left here. */
	Decision admitted(RateLimitPolicy policy, long now) {
		return new Decision(true, policy.limit(), Math.min(policy.limit(), this.storeRemaining + this.left.get()),
				Math.max(0, this.resetAt - now), 0, Math.max(0, this.nextUnitAt - now), Decision.Origin.LEASE);
	}

}
