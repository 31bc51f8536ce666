package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarWindow;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.redis.NameRegistrations.Registration;
import org.jspecify.annotations.Nullable;

/**
 * Which other parameter sets (algorithm, limit, window, burst) the same policy and variant is decided with by other
 * instances sharing the Redis: while an edited configuration rolls out (or a tenant's limits change on one instance
 * before another), old and new instances alternate, and each set of parameters counts in keys of its own
 * ({@link RedisKeys}). So that together they never admit more than the larger configuration would alone, a decision
 * is taken from the state of every live set of its own policy and variant at once, all or nothing.
 * <p>
 * Each instance says which set it decides a policy and variant with before its first decision, and again at least
 * every {@value #REFRESH_MILLIS} ms while it decides (sent alongside a decision, never waited for), learning the
 * others in the same call. A set is live for {@value #LIVE_MILLIS} ms after an instance last said so (on Redis time).
 * An instance that has not said so for half that time (idle, or just started; measured on its monotonic clock) says
 * so and waits for the answer, up to half the decision's time, before it decides, since the others may have stopped
 * counting its set. So of any two sets in use, one is always counted by the other's decisions, except in the moment
 * before an instance next says so (at most a refresh period). A registration that fails or is late never fails a
 * decision: it goes on with what is known.
 * <p>
 * Each variant has a hash of its own, so a registration reads only its own variant's sets, and the variants of one
 * name share a hash tag, so that what is due of them goes in one script call ({@link NameRegistrations}): with thousands of
 * tenants, each a variant, an instance sends a few calls a second per name, not one per tenant.
 */
final class PolicyVersions {

	/** How often an instance that decides a policy says so. */
	static final long REFRESH_MILLIS = 1_000;

	/** How long a parameter set counts as in use after an instance last said it decides with it. */
	static final long LIVE_MILLIS = 10_000;

	/**
	 * The most other sets a policy is decided with: a rolling deploy has one or two, and a stray writer with many
	 * would otherwise make every decision read all of them.
	 */
	static final int MAX_OTHERS = 4;

	/**
	 * The least time between two calls of one name that carry only refreshes (none a decision waits for), so that
	 * refreshes due one after another, one per variant, travel together.
	 */
	static final long BATCH_MILLIS = 250;

	/** The most variants one call says the sets of: a few microseconds each, so that no call holds Redis for long. */
	static final int MAX_BATCH = 256;

	/** Past how many names idle batches are dropped when a registration meets a new one. */
	private static final int SWEEP_ABOVE_NAMES = 1_024;

	private static final System.Logger logger = System.getLogger(PolicyVersions.class.getName());

	private final ScriptExecutor executor;

	private final RedisKeys keys;

	private final @Nullable TimeSource clock;

	private final byte[] leastTtl;

	private final Deadlines deadlines;

	/** What is due to be said, by policy name: the hash tag all of a name's hashes share. */
	private final ConcurrentHashMap<String, NameRegistrations> batches = new ConcurrentHashMap<>();

	PolicyVersions(ScriptExecutor executor, RedisKeys keys, @Nullable TimeSource clock, byte[] leastTtl,
			Deadlines deadlines) {
		this.executor = executor;
		this.keys = keys;
		this.clock = clock;
		this.leastTtl = leastTtl;
		this.deadlines = deadlines;
	}

	/**
	 * Return what one policy's instances know of the other sets.
	 */
	View view(RateLimitPolicy policy) {
		return new View(policy, this.keys.versions(policy), RedisKeys.bytes(field(policy)));
	}

	/**
	 * Start saying again which set this instance decides the policy with, if that is due, without waiting for the
	 * answer: so that the registrations of several policies decided together travel at once.
	 */
	void refreshIfDue(View view) {
		long now = localNow();
		if (view.isDue(now)) {
			view.register(now, view.mustWait(now));
		}
	}

	/**
	 * Return the other sets the policy is decided with, to be decided together with its own: usually none, from
	 * memory. Says again which set this instance uses when it last did so a while ago, and waits for the answer
	 * (until half the time left to the deadline) if the others may have stopped counting this instance's set. A
	 * registration that fails or is late never fails the decision: it is decided with what is known, and the next
	 * attempt waits a refresh period.
	 * @param deadlineNanos when the decision must be over, on {@link System#nanoTime()}
	 */
	List<RateLimitPolicy> others(View view, long deadlineNanos) {
		if (!view.isDue(localNow())) {
			return view.others; // the common case, without a future
		}
		try {
			return othersAsync(view, deadlineNanos).get(); // completes by half the time left, whatever Redis does
		}
		catch (ExecutionException ex) {
			return view.others;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return view.others;
		}
	}

	/**
	 * Return the other sets as {@link #others} does, without waiting: the stage completes at once from memory, or
	 * when the registration it must wait for answers, fails, or reaches half the time left to the deadline.
	 */
	CompletableFuture<List<RateLimitPolicy>> othersAsync(View view, long deadlineNanos) {
		long now = localNow();
		if (!view.isDue(now)) {
			return CompletableFuture.completedFuture(view.others);
		}
		boolean mustWait = view.mustWait(now);
		CompletableFuture<?> registration = view.register(now, mustWait);
		if (!mustWait) {
			return CompletableFuture.completedFuture(view.others);
		}
		return this.deadlines.completeAfter(registration.copy(), null, (deadlineNanos - System.nanoTime()) / 2)
			.handle((ignored, failure) -> view.others);
	}

	/**
	 * Return the sets that took units for a decision counted at the given time (Redis time) and still count: the
	 * others known since then. One learned of later did not take them, and must not be given them.
	 */
	List<RateLimitPolicy> othersSince(View view, long countedAtMillis) {
		return (view.othersSince <= countedAtMillis) ? view.others : List.of();
	}

	/** Time for the registrations' ages: monotonic, unless a clock drives the store. */
	private long localNow() {
		return (this.clock != null) ? this.clock.currentTimeMillis() : System.nanoTime() / 1_000_000;
	}

	/**
	 * A policy's field in the hash: its counting parameters (a calendar window's period and zone last, which an
	 * earlier version reads as no field of its own), then its variant (which may hold any character).
	 */
	static String field(RateLimitPolicy policy) {
		CalendarWindow calendar = policy.calendar();
		return RateLimitScript.code(policy.algorithm()) + ":" + policy.limit() + ":" + policy.windowMillis() + ":"
				+ policy.burst() + ((calendar != null) ? ":" + calendar.period() + "/" + calendar.zone().getId() : "")
				+ "|" + policy.variant();
	}

	/**
	 * Read a field back as a policy of the given one's name and variant, or {@code null} if it is another variant's
	 * or not a field this version writes.
	 */
	static @Nullable RateLimitPolicy parse(String field, RateLimitPolicy own) {
		int bar = field.indexOf('|');
		if (bar < 0 || !field.substring(bar + 1).equals(own.variant())) {
			return null;
		}
		String[] parts = field.substring(0, bar).split(":", 5);
		if (parts.length < 4) {
			return null;
		}
		Algorithm algorithm = RateLimitScript.algorithmOf(parts[0]);
		if (algorithm == null) {
			return null;
		}
		try {
			RateLimitPolicy.Builder builder = RateLimitPolicy.builder(own.name())
				.variant(own.variant())
				.algorithm(algorithm)
				.limit(Long.parseLong(parts[1]))
				.window(Duration.ofMillis(Long.parseLong(parts[2])))
				.burst(Long.parseLong(parts[3]));
			if (parts.length == 5) {
				int slash = parts[4].indexOf('/');
				builder.window(CalendarWindow.of(CalendarWindow.Period.valueOf(parts[4].substring(0, slash)),
						ZoneId.of(parts[4].substring(slash + 1))));
			}
			return builder.build();
		}
		catch (IllegalArgumentException | DateTimeException | IndexOutOfBoundsException ex) {
			return null; // not written by this store (a number out of range): nothing this version can count
		}
	}

	/**
	 * Return the decision of a policy taken together with its other sets: rejected if any of them rejected (waiting
	 * for the last of them), with what is left under the tightest of them.
	 */
	static Decision combined(Decision own, List<Decision> others) {
		boolean allowed = own.allowed();
		long remaining = own.remaining();
		long resetAfter = own.resetAfterMillis();
		long nextUnit = own.nextUnitAfterMillis();
		long retryAfter = own.allowed() ? 0 : own.retryAfterMillis();
		for (Decision other : others) {
			if (other.remaining() < remaining) {
				remaining = other.remaining();
				resetAfter = other.resetAfterMillis(); // the tightest state says when its units are back
			}
			nextUnit = Math.min(nextUnit, other.nextUnitAfterMillis()); // the earliest any state could give more
			if (!other.allowed()) {
				// One the other set can never admit passes once that set is out of use.
				long wait = other.exceedsCapacity() ? Math.max(other.resetAfterMillis(), LIVE_MILLIS)
						: other.retryAfterMillis();
				retryAfter = (!allowed && retryAfter == Decision.NEVER) ? Decision.NEVER
						: Math.max(allowed ? 0 : retryAfter, wait);
				allowed = false;
			}
		}
		return new Decision(allowed, own.limit(), Math.max(0, Math.min(own.limit(), remaining)), resetAfter,
				allowed ? 0 : retryAfter, nextUnit, own.origin());
	}

	private void enqueue(Registration registration, boolean urgent) {
		String name = registration.view.policy.name();
		if (this.batches.size() > SWEEP_ABOVE_NAMES && !this.batches.containsKey(name)) {
			dropIdleBatches();
		}
		while (true) {
			NameRegistrations batch = this.batches.computeIfAbsent(name, (n) -> new NameRegistrations());
			List<Registration> due;
			synchronized (batch) {
				if (batch.dropped) {
					continue; // dropped meanwhile: a new one takes it
				}
				batch.queue.add(registration);
				batch.urgent |= urgent;
				due = batch.take(localNow());
			}
			send(batch, due);
			return;
		}
	}

	/** Send what a name has due, if its time has come; an urgent registration's time has always come. */
	private void flush(String name, boolean urgent) {
		NameRegistrations batch = this.batches.get(name);
		if (batch == null) {
			return;
		}
		List<Registration> due;
		synchronized (batch) {
			batch.urgent |= urgent && !batch.queue.isEmpty();
			due = batch.take(localNow());
		}
		send(batch, due);
	}

	/** Drop the batches of names no registration needed for a set's life (names built per tenant come and go). */
	private void dropIdleBatches() {
		long now = localNow();
		this.batches.forEach((name, batch) -> {
			synchronized (batch) {
				if (!batch.inFlight && batch.queue.isEmpty() && Math.abs(now - batch.lastSent) >= LIVE_MILLIS) {
					batch.dropped = true;
					this.batches.remove(name, batch);
				}
			}
		});
	}

	/**
	 * Say the sets of the given variants of one name in one call, each reading only its own hash; when it answers,
	 * send what became due meanwhile.
	 */
	private void send(NameRegistrations batch, @Nullable List<Registration> due) {
		if (due == null) {
			return;
		}
		byte[][] keys = new byte[due.size()][];
		byte[][] args = new byte[4 + due.size()][];
		args[0] = (this.clock != null) ? PolicyScript.bytes(localNow()) : PolicyScript.EMPTY;
		args[1] = PolicyScript.bytes(LIVE_MILLIS);
		args[2] = this.leastTtl;
		args[3] = PolicyScript.bytes(MAX_OTHERS);
		for (int i = 0; i < due.size(); i++) {
			keys[i] = due.get(i).view.registryKey;
			args[4 + i] = due.get(i).view.field;
		}
		CompletableFuture<List<Object>> call;
		try {
			call = this.executor.execute(RateLimitScript.POLICY_VERSIONS, keys, args);
		}
		catch (RuntimeException ex) {
			call = CompletableFuture.failedFuture(ex);
		}
		call.whenComplete((reply, failure) -> {
			answer(due, reply, failure);
			List<Registration> next;
			synchronized (batch) {
				batch.inFlight = false;
				next = batch.take(localNow());
			}
			send(batch, next);
		});
	}

	private static void answer(List<Registration> due, @Nullable List<Object> reply, @Nullable Throwable failure) {
		int at = 1;
		for (Registration registration : due) {
			if (failure == null && reply != null && at < reply.size()
					&& reply.get(at) instanceof Number count && at + 1 + count.intValue() <= reply.size()) {
				registration.view.answered(registration, ((Number) reply.get(0)).longValue(),
						reply.subList(at + 1, at + 1 + count.intValue()));
				at += 1 + count.intValue();
			}
			else {
				registration.view.failed(registration, (failure != null) ? failure
						: new IllegalStateException("no reply from the policy versions script"));
			}
		}
	}

	/**
	 * What this instance knows of the other sets of one policy and variant, and when it last said which it uses.
	 */
	final class View {

		final RateLimitPolicy policy;

		private final byte[] registryKey;

		private final byte[] field;

		/** Whether a registration of this instance's set has succeeded. */
		volatile boolean registered;

		/** When this instance last sent its set with success, on {@link #localNow()}. */
		volatile long registeredAt;

		/** When a registration last failed, on {@link #localNow()}. */
		volatile long failedAt;

		volatile boolean failed;

		/** The other sets, as of the last registration. */
		volatile List<RateLimitPolicy> others = List.of();

		/** Since when (Redis time) {@link #others} holds what it holds. */
		volatile long othersSince = Long.MIN_VALUE;

		private final AtomicReference<@Nullable Registration> registering = new AtomicReference<>();

		/** The other sets already logged. */
		private final Set<String> warned = ConcurrentHashMap.newKeySet();

		View(RateLimitPolicy policy, byte[] registryKey, byte[] field) {
			this.policy = policy;
			this.registryKey = registryKey;
			this.field = field;
		}

		/** Whether a registration is due: none for a refresh period, and no failure for one either. */
		boolean isDue(long now) {
			if (this.failed && now - this.failedAt < REFRESH_MILLIS) {
				return false;
			}
			return !this.registered || now - this.registeredAt >= REFRESH_MILLIS || now < this.registeredAt;
		}

		/** Whether a decision must wait for the registration: none yet, or none for half a set's life. */
		boolean mustWait(long now) {
			return !this.registered || now - this.registeredAt >= LIVE_MILLIS / 2 || now < this.registeredAt;
		}

		/**
		 * Have this instance's set said (with the name's other variants due, in one call) unless it already waits to
		 * be; return that registration. One a decision waits for goes at once, others within {@link #BATCH_MILLIS}.
		 */
		CompletableFuture<?> register(long now, boolean urgent) {
			Registration current = this.registering.get();
			if (current != null && !current.done.isDone()) {
				flush(this.policy.name(), urgent);
				return current.done;
			}
			Registration next = new Registration(this, now);
			if (!this.registering.compareAndSet(current, next)) {
				Registration won = this.registering.get();
				return (won != null) ? won.done : CompletableFuture.completedFuture(null);
			}
			enqueue(next, urgent);
			return next.done;
		}

		/** Take the reply's fields of this variant's other sets in use. */
		void answered(Registration registration, long redisNow, List<Object> fields) {
			List<RateLimitPolicy> others = others(fields);
			if (!others.equals(this.others)) {
				warnOfNew(others);
				this.othersSince = redisNow;
				this.others = others;
			}
			this.registeredAt = registration.at;
			this.registered = true;
			this.failed = false;
			registration.done.complete(null);
		}

		void failed(Registration registration, Throwable failure) {
			this.failedAt = registration.at;
			this.failed = true;
			registration.done.completeExceptionally(failure);
		}

		/** Say, once per set, that another parameter set of this policy now takes part in its decisions. */
		private void warnOfNew(List<RateLimitPolicy> others) {
			for (RateLimitPolicy other : others) {
				if (!containsState(this.others, other) && this.warned.add(field(other))) {
					logger.log(System.Logger.Level.WARNING, "Rate limit policy '" + this.policy.name() + "'"
							+ (this.policy.variant().isEmpty() ? "" : " (variant '" + this.policy.variant() + "')")
							+ " is also being decided with " + describe(other) + " by another instance sharing this "
							+ "Redis and key prefix; this instance decides it with " + describe(this.policy)
							+ ". While both are in use, a request passes only if both admit it: expected during a "
							+ "rolling deploy that changes the policy; otherwise an instance with another "
							+ "configuration (a canary, a developer's) shares the key prefix. Logged once per set.");
				}
			}
		}

		private static String describe(RateLimitPolicy policy) {
			return policy.algorithm() + " " + policy.limit() + " per " + policy.describeWindow()
					+ (policy.algorithm().isBucket() ? " burst " + policy.burst() : "");
		}

		private List<RateLimitPolicy> others(List<Object> fields) {
			List<RateLimitPolicy> others = new ArrayList<>(0);
			for (Object value : fields) {
				RateLimitPolicy other = parse(text(value), this.policy);
				if (other != null && !RedisKeys.sameState(other, this.policy) && !containsState(others, other)) {
					others.add(other);
				}
			}
			return List.copyOf(others);
		}

		private static boolean containsState(List<RateLimitPolicy> policies, RateLimitPolicy policy) {
			for (RateLimitPolicy existing : policies) {
				if (RedisKeys.sameState(existing, policy)) {
					return true;
				}
			}
			return false;
		}

		private static String text(Object value) {
			return (value instanceof byte[] bytes) ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(value);
		}

	}

}
