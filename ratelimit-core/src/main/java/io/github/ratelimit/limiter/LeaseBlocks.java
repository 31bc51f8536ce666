package io.github.ratelimit.limiter;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.ResetListener;
import org.jspecify.annotations.Nullable;

/**
 * The blocks this instance holds, one per leased key: at most {@value LeasingStore#MAX_KEYS} at once, lapsed ones
 * purged, and dropped when their key is reset through any instance sharing the store.
 */
final class LeaseBlocks {

	private final RateLimitStore store;

	private final TimeSource clock;

	private final ConcurrentHashMap<BlockKey, LeaseBlock> blocks = new ConcurrentHashMap<>();

	private final AtomicBoolean listening = new AtomicBoolean();

	/** No purge before this time: a flood of keys scans the blocks at most once a second. */
	private final AtomicLong nextPurgeAt = new AtomicLong(Long.MIN_VALUE);

	LeaseBlocks(RateLimitStore store, TimeSource clock) {
		this.store = store;
		this.clock = clock;
	}

	private record BlockKey(RateLimitPolicy policy, String key) {
	}

	/** The key's block, or {@code null} if it has none. */
	@Nullable LeaseBlock get(RateLimitPolicy policy, String key) {
		return this.blocks.get(new BlockKey(policy, key));
	}

	/** The key's block, created on first use; {@code null} if too many keys hold one already. */
	@Nullable LeaseBlock block(Acquisition acquisition) {
		BlockKey key = new BlockKey(acquisition.policy(), acquisition.key());
		LeaseBlock block = this.blocks.get(key);
		if (block != null && !block.dropped) {
			return block;
		}
		if (this.blocks.size() >= LeasingStore.MAX_KEYS && purge() == 0) {
			return null;
		}
		if (this.listening.compareAndSet(false, true)) {
			this.store.addResetListener(new DropResetBlocks());
		}
		// A block being dropped stays in the map a moment after it is marked: the key gets a new one in its place.
		return this.blocks.compute(key, (k, current) -> (current == null || current.dropped) ? new LeaseBlock() : current);
	}

	/** Forget the blocks that have lapsed, at most once a second; return how many went. */
	private int purge() {
		long now = this.clock.monotonicMillis();
		long next = this.nextPurgeAt.get();
		if (now < next || !this.nextPurgeAt.compareAndSet(next, now + 1_000)) {
			return 0;
		}
		int before = this.blocks.size();
		this.blocks.values().removeIf((block) -> {
			synchronized (block) {
				return !block.live(now) && block.refilling == null;
			}
		});
		return before - this.blocks.size();
	}

	void drop(String policy, String variant, String key) {
		this.blocks.entrySet().removeIf((entry) -> {
			BlockKey blockKey = entry.getKey();
			if (!blockKey.key().equals(key) || !blockKey.policy().name().equals(policy)
					|| !blockKey.policy().variant().equals(variant)) {
				return false;
			}
			return dropped(entry.getValue());
		});
	}

	void dropAll() {
		this.blocks.values().removeIf(LeaseBlocks::dropped);
	}

	/** Mark a block and its grant dropped, so that they admit nothing more; always {@code true}, to remove it. */
	private static boolean dropped(LeaseBlock block) {
		synchronized (block) {
			block.dropped = true;
			LeaseGrant grant = block.grant;
			if (grant != null) {
				grant.dropped = true;
			}
		}
		return true;
	}

	/** Drops the blocks of keys reset through any instance sharing the store. */
	private final class DropResetBlocks implements ResetListener {

		@Override
		public void onReset(String policy, String variant, String key) {
			drop(policy, variant, key);
		}

		@Override
		public void onClear() {
			dropAll();
		}

	}

	/** Return whether this instance's live block of the key holds at least {@code cost} units. */
	boolean holds(RateLimitPolicy policy, String key, long cost) {
		LeaseBlock block = get(policy, key);
		if (block == null) {
			return false;
		}
		LeaseGrant grant = block.grant;
		return grant != null && grant.live(this.clock.monotonicMillis()) && grant.left.get() >= cost;
	}

	/** Return units to the live block of the key that counted them at {@code countedAt}; whether it could. */
	boolean returnToBlock(Acquisition acquisition, long countedAt) {
		if (!LeasingStore.leases(acquisition.policy())) {
			return false;
		}
		LeaseBlock block = get(acquisition.policy(), acquisition.key());
		if (block == null) {
			return false;
		}
		LeaseGrant grant = block.grant;
		if (grant == null || !grant.live(this.clock.monotonicMillis()) || grant.countedAt != countedAt) {
			synchronized (block) {
				block.lastRemaining += acquisition.cost(); // they go back to the store: it may have that much more
			}
			return false;
		}
		grant.left.addAndGet(acquisition.cost());
		return true;
	}

}
