package io.github.ratelimit.limiter;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.OneByOne;
import io.github.ratelimit.store.PartialStoreFailureException;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.Reservation;
import io.github.ratelimit.store.ResetListener;
import io.github.ratelimit.store.SharedChanges;
import org.jspecify.annotations.Nullable;

/**
 * Leased quotas, in front of a shared store: for a policy that leases ({@link RateLimitPolicy#lease()}), this
 * instance takes a key's units a block at a time, in the one store call that decides the request that needs it, and
 * admits the key's next requests from the block without a round trip. While one request of the instance takes the
 * key's block, its other requests wait for it rather than take one each.
 * <p>
 * Every unit admitted from a block was counted by the store when the block was taken, and is admitted while the
 * store would still have admitted it then: in a window ({@code FIXED}, and the current window of
 * {@code SLIDING_COUNTER}) until the window ends; in a bucket while the bucket could not have refilled to its burst
 * with the block's units still out of it. So the fleet never admits more than the store would; what it may admit
 * less is what other instances hold unused, and what lapses. Units given back (count by outcome, a rejected
 * request's other limits) return to the live block they came from; a block that has gone gives them back to the
 * store.
 * <p>
 * Blocks are kept for at most {@value #MAX_KEYS} keys: past that, keys without a block are decided by the store one
 * request at a time, so that a flood of keys costs memory no more than it costs the keys' own quotas.
 */
final class LeasingStore implements RateLimitStore {

	/** The most keys holding a block at once. */
	static final int MAX_KEYS = 65_536;

	/** An automatically sized block is at most the capacity divided by this. */
	static final long AUTO_SHARE = 16;

	private static final Logger logger = System.getLogger(LeasingStore.class.getName());

	private final RateLimitStore store;

	private final TimeSource clock;

	private final ConcurrentHashMap<BlockKey, Block> blocks = new ConcurrentHashMap<>();

	private final AtomicBoolean listening = new AtomicBoolean();

	/** No purge before this time: a flood of keys scans the blocks at most once a second. */
	private final AtomicLong nextPurgeAt = new AtomicLong(Long.MIN_VALUE);

	private final ThrottledLogger refundFailures = new ThrottledLogger(logger,
			RateLimiter.DEFAULT_FAILURE_LOG_INTERVAL_MILLIS);

	LeasingStore(RateLimitStore store, TimeSource clock) {
		this.store = store;
		this.clock = clock;
	}

	private record BlockKey(RateLimitPolicy policy, String key) {
	}

	/** A key's block, and what sizes its next one; guarded by its own monitor. */
	private static final class Block {

		/** The units of the block last taken, which requests take without the monitor; {@code null} before. */
		volatile @Nullable Grant grant;

		/** The size of the last block taken. */
		long size;

		/** Until this instance's time, the store has too little left for a block: requests ask for their own. */
		long scarceUntil = Long.MIN_VALUE;

		/** For a bucket: the most whole tokens the store last said it had left, and this instance's time then. */
		long lastRemaining;

		long lastKnownAt = Long.MIN_VALUE;

		/** Whether the block was reset or dropped: it admits nothing more. */
		boolean dropped;

		/** The block being taken, which the key's other requests wait for rather than take one each. */
		@Nullable CompletableFuture<Void> refilling;

		boolean live(long now) {
			Grant grant = this.grant;
			return grant != null && grant.live(now);
		}

	}

	/**
	 * The units of one block as they are admitted: taken and given back with a compare-and-set, so that the requests
	 * of a hot key do not queue on a lock (on a busy core a lock's holder is preempted, and every other request of the
	 * key then sleeps).
	 */
	private static final class Grant {

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

		Grant(long left, long takenAt, long expiresAt, long countedAt, long storeRemaining, long resetAt,
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

	}

	static boolean leases(RateLimitPolicy policy) {
		return policy.lease() != 0;
	}

	private static boolean anyLeased(List<Acquisition> acquisitions) {
		for (Acquisition acquisition : acquisitions) {
			if (leases(acquisition.policy())) {
				return true;
			}
		}
		return false;
	}

	@Override
	public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
		if (!leases(policy)) {
			return this.store.tryAcquire(policy, key, cost);
		}
		Acquisition acquisition = new Acquisition(policy, key, cost);
		Block block = block(acquisition);
		if (block != null) {
			long now = this.clock.monotonicMillis();
			Grant grant = block.grant;
			if (grant != null && grant.take(cost, now)) {
				return local(policy, grant, now);
			}
		}
		if (block == null || asksAlone(policy, block, cost)) {
			// No block to take from or to take: the store's own decision of one request, which it batches with the
			// policy's other requests as it would an unleased one's.
			long startedAt = this.clock.monotonicMillis();
			Decision decision = this.store.tryAcquire(policy, key, cost);
			if (block != null) {
				noteRemaining(block, decision, startedAt);
			}
			return decision;
		}
		return join(decide(List.of(acquisition), this::askNow, false)).decisions().get(0);
	}

	/** Whether a request of the key would ask the store for its own units alone: no block holds them or is taken. */
	private boolean asksAlone(RateLimitPolicy policy, Block block, long cost) {
		long now = this.clock.monotonicMillis();
		synchronized (block) {
			return block.refilling == null && plannedSize(policy, block, cost, now) == cost;
		}
	}

	/** The units the key's next store call takes: a block, or the request's own. Called with the monitor held. */
	private static long plannedSize(RateLimitPolicy policy, Block block, long cost, long now) {
		if (policy.algorithm().isBucket() && !bucketHasRoom(policy, block, cost, now)) {
			return cost;
		}
		return Math.max(cost, nextSize(policy, block, now));
	}

	private static void noteRemaining(Block block, Decision decision, long at) {
		synchronized (block) {
			block.lastRemaining = decision.remaining();
			block.lastKnownAt = at;
		}
	}

	@Override
	public Reservation tryAcquireAll(List<Acquisition> acquisitions) {
		if (!anyLeased(acquisitions)) {
			return this.store.tryAcquireAll(acquisitions);
		}
		Reservation local = fromBlockAlone(acquisitions);
		return (local != null) ? local : join(decide(acquisitions, this::askNow, false));
	}

	@Override
	public CompletionStage<Reservation> tryAcquireAllAsync(List<Acquisition> acquisitions) {
		if (!anyLeased(acquisitions)) {
			return this.store.tryAcquireAllAsync(acquisitions);
		}
		Reservation local = fromBlockAlone(acquisitions);
		return (local != null) ? CompletableFuture.completedFuture(local)
				: decide(acquisitions, this.store::tryAcquireAllAsync, true);
	}

	/** The common case, kept short: one leased acquisition that its live block holds the units of. */
	private @Nullable Reservation fromBlockAlone(List<Acquisition> acquisitions) {
		if (acquisitions.size() != 1) {
			return null;
		}
		Acquisition acquisition = acquisitions.get(0);
		Block block = this.blocks.get(new BlockKey(acquisition.policy(), acquisition.key()));
		if (block == null) {
			return null;
		}
		long now = this.clock.monotonicMillis();
		Grant grant = block.grant;
		if (grant == null || !grant.take(acquisition.cost(), now)) {
			return null;
		}
		return new Reservation(List.of(local(acquisition.policy(), grant, now)), new long[] { grant.countedAt });
	}

	private CompletionStage<Reservation> askNow(List<Acquisition> asked) {
		try {
			return CompletableFuture.completedFuture(this.store.tryAcquireAll(asked));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	private static Reservation join(CompletionStage<Reservation> stage) {
		try {
			return stage.toCompletableFuture().join();
		}
		catch (CompletionException ex) {
			throw unwrap(ex);
		}
	}

	private static RuntimeException unwrap(Throwable failure) {
		Throwable cause = (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
				: failure;
		return (cause instanceof RuntimeException ex) ? ex : new CompletionException(cause);
	}

	/**
	 * Decide a request: each leased acquisition from its block, or from a block taken for it (or, when the store
	 * cannot give a block, by the store alone), one after the other; then the others together, in one call, which
	 * the store decides all or nothing among themselves. If any is rejected, what this instance took for the leased
	 * ones goes back. If the store fails after some were taken, the failure is a partial one: the caller decides
	 * the rest by their failure modes and keeps or gives back what was taken.
	 */
	private CompletionStage<Reservation> decide(List<Acquisition> acquisitions,
			Function<List<Acquisition>, CompletionStage<Reservation>> ask, boolean nonBlocking) {
		Request request = new Request(acquisitions, nonBlocking);
		CompletionStage<Void> leased = CompletableFuture.completedFuture(null);
		for (int i = 0; i < request.size; i++) {
			int index = i;
			if (leases(acquisitions.get(i).policy())) {
				leased = leased.thenCompose((ignored) -> request.rejected() ? CompletableFuture.completedFuture(null)
						: decideLeased(request, index, ask));
			}
		}
		return leased.handle((ignored, failure) -> {
			if (failure != null) {
				throw request.failed(List.of(), unwrap(failure));
			}
			return request;
		}).thenCompose((decided) -> {
			List<Integer> others = new ArrayList<>();
			for (int i = 0; i < request.size; i++) {
				if (request.decisions[i] == null) {
					others.add(i);
				}
			}
			if (request.rejected() || others.isEmpty()) {
				return CompletableFuture.completedFuture(request.settle());
			}
			List<Acquisition> asked = others.stream().map(acquisitions::get).toList();
			return ask.apply(asked).handle((reservation, failure) -> {
				if (failure != null) {
					throw request.failed(others, unwrap(failure));
				}
				for (int j = 0; j < others.size(); j++) {
					request.decided(others.get(j), reservation.decisions().get(j), reservation.countedAt(j), null,
							false);
				}
				return request.settle();
			});
		});
	}

	private CompletionStage<Void> decideLeased(Request request, int i,
			Function<List<Acquisition>, CompletionStage<Reservation>> ask) {
		Acquisition acquisition = request.acquisitions.get(i);
		RateLimitPolicy policy = acquisition.policy();
		Block block = block(acquisition);
		if (block == null) {
			return ask(request, i, acquisition, ask); // too many keys hold a block: this one asks request by request
		}
		while (true) {
			long startedAt = this.clock.monotonicMillis();
			CompletableFuture<Void> pending;
			long size;
			Grant grant = block.grant;
			if (grant != null && grant.take(acquisition.cost(), startedAt)) {
				request.decided(i, local(policy, grant, startedAt), grant.countedAt, block, true);
				return CompletableFuture.completedFuture(null);
			}
			synchronized (block) {
				pending = block.refilling;
				size = acquisition.cost();
				if (pending == null) {
					size = plannedSize(policy, block, acquisition.cost(), startedAt);
					if (size > acquisition.cost()) {
						block.refilling = new CompletableFuture<>();
					}
				}
			}
			if (pending != null) {
				// Another request of this instance is taking the key's block: use it rather than take one more.
				CompletableFuture<Void> taken = pending.handle((ignored, failure) -> null);
				if (request.nonBlocking) {
					return taken.thenCompose((ignored) -> decideLeased(request, i, ask));
				}
				taken.join();
				continue;
			}
			if (size == acquisition.cost()) {
				return ask(request, i, acquisition, ask);
			}
			return takeBlock(request, i, block, size, startedAt, ask, true).whenComplete((ignored, failure) -> {
				CompletableFuture<Void> refilled;
				synchronized (block) {
					refilled = block.refilling;
					block.refilling = null;
				}
				if (refilled != null) {
					refilled.complete(null);
				}
			});
		}
	}

	/**
	 * Ask the store for a block of {@code size} units, this request's among them. A store that has fewer left says
	 * how many: the block then takes those, if more than this request's, else the request asks for its own alone.
	 */
	private CompletionStage<Void> takeBlock(Request request, int i, Block block, long size, long startedAt,
			Function<List<Acquisition>, CompletionStage<Reservation>> ask, boolean mayShrink) {
		Acquisition acquisition = request.acquisitions.get(i);
		RateLimitPolicy policy = acquisition.policy();
		Acquisition wholeBlock = new Acquisition(policy, acquisition.key(), size);
		return ask.apply(List.of(wholeBlock)).thenCompose((reservation) -> {
			Decision decision = reservation.decisions().get(0);
			if (!decision.allowed()) {
				long left = decision.remaining();
				if (mayShrink && left > acquisition.cost() && left < size) {
					return takeBlock(request, i, block, left, startedAt, ask, false);
				}
				synchronized (block) {
					block.scarceUntil = startedAt + decision.retryAfterMillis();
					block.lastRemaining = decision.remaining();
					block.lastKnownAt = startedAt;
				}
				return ask(request, i, acquisition, ask);
			}
			long countedAt = reservation.countedAt(0);
			synchronized (block) {
				if (block.dropped) {
					// Reset while the block was asked for: this request keeps its units, the rest lapse.
					request.decided(i, decision, countedAt, null, true);
					return CompletableFuture.completedFuture(null);
				}
				Grant old = block.grant;
				// Units given back since it ran out, or left by requests that raced this one, go on in the new grant.
				long carried = (old != null && old.live(startedAt)) ? old.left.getAndSet(0) : 0;
				long unspent = carried + size - acquisition.cost();
				long expiresAt = startedAt + lifetime(policy, countedAt, decision.remaining(), unspent);
				long takenAt = startedAt;
				if (old != null && carried > 0) {
					takenAt = old.takenAt;
					expiresAt = Math.min(old.expiresAt, expiresAt); // the earlier end holds for both
				}
				block.grant = new Grant(unspent, takenAt, expiresAt, countedAt, decision.remaining(),
						startedAt + decision.resetAfterMillis(), startedAt + decision.nextUnitAfterMillis());
				block.size = size;
				block.lastRemaining = decision.remaining();
				block.lastKnownAt = startedAt;
				request.decided(i, reported(policy, decision, unspent), countedAt, block, true);
			}
			return CompletableFuture.completedFuture(null);
		});
	}

	/** Ask the store for this request's units alone. */
	private CompletionStage<Void> ask(Request request, int i, Acquisition acquisition,
			Function<List<Acquisition>, CompletionStage<Reservation>> ask) {
		long startedAt = this.clock.monotonicMillis();
		return ask.apply(List.of(acquisition)).thenAccept((reservation) -> {
			Decision decision = reservation.decisions().get(0);
			Block block = this.blocks.get(new BlockKey(acquisition.policy(), acquisition.key()));
			if (block != null) {
				noteRemaining(block, decision, startedAt);
			}
			request.decided(i, decision, reservation.countedAt(0), null, true);
		});
	}

	/**
	 * Whether a bucket, as the store last described it, has room for a block to live: it must not be full, or the
	 * block's units would lapse at once (see {@link #lifetime}). A bucket not heard of yet is asked for the request's
	 * units alone, which tells.
	 */
	private static boolean bucketHasRoom(RateLimitPolicy policy, Block block, long cost, long now) {
		if (block.lastKnownAt == Long.MIN_VALUE || now < block.lastKnownAt) {
			return false;
		}
		long tokens = policy.burst() - (block.lastRemaining + 1) + cost;
		// What refilled since, rounded up: tokens × unitsPerToken ≤ elapsed × unitsPerMilli.
		long elapsed = Math.min(now - block.lastKnownAt, policy.windowMillis());
		long refilled = (elapsed * policy.unitsPerMilli() + policy.unitsPerToken() - 1) / policy.unitsPerToken();
		return tokens - refilled > 0;
	}

	/** The key's block, created on first use; {@code null} if too many keys hold one already. */
	private @Nullable Block block(Acquisition acquisition) {
		BlockKey key = new BlockKey(acquisition.policy(), acquisition.key());
		Block block = this.blocks.get(key);
		if (block != null) {
			return block;
		}
		if (this.blocks.size() >= MAX_KEYS && purge() == 0) {
			return null;
		}
		if (this.listening.compareAndSet(false, true)) {
			this.store.addResetListener(new DropResetBlocks());
		}
		return this.blocks.computeIfAbsent(key, (k) -> new Block());
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

	/**
	 * The size of the key's next block: the policy's, or, for {@link RateLimitPolicy#LEASE_AUTO}, twice the last one
	 * if it was used up before it lapsed, else half of it; at least 1, at most the capacity divided by
	 * {@value #AUTO_SHARE}. None while the store had too little left for the last one, until the time it gave.
	 * Called with the block's monitor held.
	 */
	private static long nextSize(RateLimitPolicy policy, Block block, long now) {
		if (now < block.scarceUntil) {
			return 1; // what the request costs: no block until the store has one to give
		}
		if (policy.lease() != RateLimitPolicy.LEASE_AUTO) {
			return policy.lease();
		}
		long most = Math.max(1, policy.capacity() / AUTO_SHARE);
		long last = Math.max(1, block.size);
		Grant grant = block.grant;
		boolean usedUp = grant == null || grant.live(now) || grant.left.get() == 0;
		long next = usedUp ? 2 * last : Math.max(1, last / 2);
		return Math.min(most, next);
	}

	/**
	 * How long units counted at {@code countedAt} may be admitted from a block, so that every admission is one the
	 * store would have made then. In a window ({@code FIXED}, and the current window of {@code SLIDING_COUNTER}): until
	 * it ends. In a bucket: while the bucket, refilling at its rate from what it had left, could not yet have reached
	 * its burst with the block's unspent units still out of it, since the units a full bucket would have lost are
	 * what admitting them later could add; so a block taken from a nearly full bucket lapses at once.
	 */
	static long lifetime(RateLimitPolicy policy, long countedAt, long storeRemaining, long unspent) {
		long window = policy.windowMillis();
		if (policy.algorithm() == Algorithm.FIXED || policy.algorithm() == Algorithm.SLIDING_COUNTER) {
			return window - Math.floorMod(countedAt, window);
		}
		// The store reports whole tokens: up to one more may be there in part.
		long room = policy.burst() - (storeRemaining + 1) - unspent;
		if (room <= 0) {
			return 0;
		}
		// room × unitsPerToken stays below 2^51: the policy checks burst × unitsPerToken.
		return Math.min(window, room * policy.unitsPerToken() / policy.unitsPerMilli());
	}

	private static Decision local(RateLimitPolicy policy, Grant grant, long now) {
		return new Decision(true, policy.limit(), Math.min(policy.limit(), grant.storeRemaining + grant.left.get()),
				Math.max(0, grant.resetAt - now), 0, Math.max(0, grant.nextUnitAt - now), Decision.Origin.LEASE);
	}

	private static Decision reported(RateLimitPolicy policy, Decision decision, long left) {
		return new Decision(true, decision.limit(), Math.min(decision.limit(), decision.remaining() + left),
				decision.resetAfterMillis(), 0, decision.nextUnitAfterMillis(), decision.origin());
	}

	/** One request's acquisitions as they are decided. */
	private final class Request {

		final List<Acquisition> acquisitions;

		final int size;

		/** Whether what it gives back must not make the calling thread wait. */
		final boolean nonBlocking;

		final @Nullable Decision[] decisions;

		final long[] countedAt;

		/** Per acquisition, whether this instance holds units it took for it (from a block, or asked alone). */
		final boolean[] taken;

		/** Per acquisition, the block its units came from, or {@code null}. */
		final @Nullable Block[] from;

		Request(List<Acquisition> acquisitions, boolean nonBlocking) {
			this.acquisitions = acquisitions;
			this.size = acquisitions.size();
			this.nonBlocking = nonBlocking;
			this.decisions = new Decision[this.size];
			this.countedAt = new long[this.size];
			this.taken = new boolean[this.size];
			this.from = new Block[this.size];
		}

		synchronized void decided(int i, Decision decision, long countedAt, @Nullable Block from, boolean taken) {
			this.decisions[i] = decision;
			this.countedAt[i] = countedAt;
			this.from[i] = from;
			this.taken[i] = taken && decision.allowed();
		}

		synchronized boolean rejected() {
			for (Decision decision : this.decisions) {
				if (decision != null && !decision.allowed()) {
					return true;
				}
			}
			return false;
		}

		/**
		 * The reservation. If rejected, what this instance took is given back (the store already gave back what its
		 * own call took), and the acquisitions not asked are reported undecided.
		 */
		synchronized Reservation settle() {
			if (rejected()) {
				giveBack();
				for (int i = 0; i < this.size; i++) {
					if (this.decisions[i] == null) {
						this.decisions[i] = OneByOne.notDecided(this.acquisitions.get(i));
					}
				}
			}
			List<Decision> decided = new ArrayList<>(this.size);
			for (Decision decision : this.decisions) {
				decided.add(Decision.class.cast(decision));
			}
			return new Reservation(decided, this.countedAt);
		}

		/**
		 * The store failed: if this instance took units for some acquisitions already, the failure is partial, those
		 * decided and kept for the caller to keep or give back; else it is the store's failure as it is.
		 */
		synchronized RuntimeException failed(List<Integer> others, RuntimeException failure) {
			@Nullable Decision[] all = new Decision[this.size];
			long[] times = this.countedAt.clone();
			boolean anyTaken = false;
			for (int i = 0; i < this.size; i++) {
				if (this.taken[i]) {
					all[i] = this.decisions[i];
					anyTaken = true;
				}
			}
			if (failure instanceof PartialStoreFailureException partial) {
				for (int j = 0; j < others.size(); j++) {
					int i = others.get(j);
					all[i] = partial.failed(j) ? null : partial.decision(j);
					times[i] = partial.countedAt(j);
					anyTaken |= !partial.failed(j);
				}
			}
			if (!anyTaken) {
				return (failure instanceof PartialStoreFailureException partial
						&& partial.getCause() instanceof RuntimeException cause) ? cause : failure;
			}
			RuntimeException cause = (failure instanceof PartialStoreFailureException
					&& failure.getCause() instanceof RuntimeException inner) ? inner : failure;
			return new PartialStoreFailureException(all, times, cause);
		}

		/** Give back, once, what this instance took: to the block it came from, else to the store. */
		private void giveBack() {
			List<Acquisition> toStore = new ArrayList<>();
			List<Long> times = new ArrayList<>();
			for (int i = 0; i < this.size; i++) {
				if (!this.taken[i]) {
					continue;
				}
				this.taken[i] = false;
				Acquisition acquisition = this.acquisitions.get(i);
				if (!returnToBlock(acquisition, this.countedAt[i])) {
					toStore.add(acquisition);
					times.add(this.countedAt[i]);
				}
				this.decisions[i] = OneByOne.givenBack(Decision.class.cast(this.decisions[i]), acquisition.cost());
			}
			if (!toStore.isEmpty()) {
				refundQuietly(toStore, times.stream().mapToLong(Long::longValue).toArray(), this.nonBlocking);
			}
		}

	}

	/** Give units back to the store, logging rather than throwing if it cannot: the client stays counted. */
	private void refundQuietly(List<Acquisition> acquisitions, long[] countedAt, boolean nonBlocking) {
		try {
			if (nonBlocking) {
				this.store.refundAllAsync(acquisitions, countedAt).exceptionally((failure) -> {
					logRefundFailure(unwrap(failure));
					return null;
				});
			}
			else {
				this.store.refundAll(acquisitions, countedAt);
			}
		}
		catch (RuntimeException ex) {
			logRefundFailure(ex);
		}
	}

	private void logRefundFailure(RuntimeException failure) {
		this.refundFailures.log(Level.WARNING, this.clock.monotonicMillis(),
				(skipped) -> "Rate limit store could not give back leased units of a rejected request ("
						+ failure.getMessage() + "); the client stays counted"
						+ ((skipped > 0) ? " (" + skipped + " more since the last message)" : ""),
				null);
	}

	/** Return whether this instance's live block of the key holds at least {@code cost} units. */
	boolean holds(RateLimitPolicy policy, String key, long cost) {
		Block block = this.blocks.get(new BlockKey(policy, key));
		if (block == null) {
			return false;
		}
		Grant grant = block.grant;
		return grant != null && grant.live(this.clock.monotonicMillis()) && grant.left.get() >= cost;
	}

	/** Return units to the live block of the key that counted them at {@code countedAt}; whether it could. */
	private boolean returnToBlock(Acquisition acquisition, long countedAt) {
		if (!leases(acquisition.policy())) {
			return false;
		}
		Block block = this.blocks.get(new BlockKey(acquisition.policy(), acquisition.key()));
		if (block == null) {
			return false;
		}
		Grant grant = block.grant;
		if (grant == null || !grant.live(this.clock.monotonicMillis()) || grant.countedAt != countedAt) {
			synchronized (block) {
				block.lastRemaining += acquisition.cost(); // they go back to the store: it may have that much more
			}
			return false;
		}
		grant.left.addAndGet(acquisition.cost());
		return true;
	}

	@Override
	public void refund(Acquisition acquisition, long countedAtMillis) {
		if (!returnToBlock(acquisition, countedAtMillis)) {
			this.store.refund(acquisition, countedAtMillis);
		}
	}

	@Override
	public void refundAll(List<Acquisition> acquisitions, long[] countedAtMillis) {
		ForStore rest = returnToBlocks(acquisitions, countedAtMillis);
		if (!rest.acquisitions().isEmpty()) {
			this.store.refundAll(rest.acquisitions(), rest.countedAt());
		}
	}

	@Override
	public CompletionStage<Void> refundAllAsync(List<Acquisition> acquisitions, long[] countedAtMillis) {
		ForStore rest = returnToBlocks(acquisitions, countedAtMillis);
		return rest.acquisitions().isEmpty() ? CompletableFuture.completedFuture(null)
				: this.store.refundAllAsync(rest.acquisitions(), rest.countedAt());
	}

	/** Units given back that the store keeps: those whose block has gone. */
	private record ForStore(List<Acquisition> acquisitions, long[] countedAt) {
	}

	/** Return each acquisition's units to its live block; what has no block left goes back to the store. */
	private ForStore returnToBlocks(List<Acquisition> acquisitions, long[] countedAtMillis) {
		List<Acquisition> toStore = new ArrayList<>(acquisitions.size());
		List<Long> times = new ArrayList<>(acquisitions.size());
		for (int i = 0; i < acquisitions.size(); i++) {
			if (!returnToBlock(acquisitions.get(i), countedAtMillis[i])) {
				toStore.add(acquisitions.get(i));
				times.add(countedAtMillis[i]);
			}
		}
		return new ForStore(toStore, times.stream().mapToLong(Long::longValue).toArray());
	}

	/** Take a late cost from the live block its admission came from if it holds enough, else from the store. */
	@Override
	public void charge(Acquisition acquisition, long countedAtMillis) {
		if (leases(acquisition.policy())) {
			Block block = this.blocks.get(new BlockKey(acquisition.policy(), acquisition.key()));
			Grant grant = (block != null) ? block.grant : null;
			if (grant != null && grant.countedAt == countedAtMillis
					&& grant.take(acquisition.cost(), this.clock.monotonicMillis())) {
				return;
			}
		}
		this.store.charge(acquisition, countedAtMillis);
	}

	@Override
	public Decision peek(RateLimitPolicy policy, String key) {
		return this.store.peek(policy, key);
	}

	@Override
	public long currentTimeMillis() {
		return this.store.currentTimeMillis();
	}

	/** Drop this instance's block of the key, then reset it in the store. */
	@Override
	public void reset(RateLimitPolicy policy, String key) {
		drop(policy.name(), policy.variant(), key);
		try {
			this.store.reset(policy, key);
		}
		finally {
			drop(policy.name(), policy.variant(), key); // a block taken while the reset was under way
		}
	}

	@Override
	public void clear() {
		dropAll();
		this.store.clear();
	}

	private void drop(String policy, String variant, String key) {
		this.blocks.entrySet().removeIf((entry) -> {
			BlockKey blockKey = entry.getKey();
			if (!blockKey.key().equals(key) || !blockKey.policy().name().equals(policy)
					|| !blockKey.policy().variant().equals(variant)) {
				return false;
			}
			Block block = entry.getValue();
			synchronized (block) {
				block.dropped = true;
				Grant grant = block.grant;
				if (grant != null) {
					grant.dropped = true;
				}
			}
			return true;
		});
	}

	private void dropAll() {
		this.blocks.values().removeIf((block) -> {
			synchronized (block) {
				block.dropped = true;
				Grant grant = block.grant;
				if (grant != null) {
					grant.dropped = true;
				}
			}
			return true;
		});
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

	@Override
	public void addResetListener(ResetListener listener) {
		this.store.addResetListener(listener);
	}

	@Override
	public @Nullable SharedChanges sharedChanges() {
		return this.store.sharedChanges();
	}

	@Override
	public void checkSupported(RateLimitPolicy policy) {
		this.store.checkSupported(policy);
	}

	@Override
	public void checkSharedKey(RateLimitPolicy policy) {
		this.store.checkSharedKey(policy);
	}

	@Override
	public boolean isPartitioned() {
		return this.store.isPartitioned();
	}

	@Override
	public String partitionOf(RateLimitPolicy policy, String key) {
		return this.store.partitionOf(policy, key);
	}

	@Override
	public boolean isLocal() {
		return this.store.isLocal();
	}

}
