package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarWindow;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitStoreException;
import org.jspecify.annotations.Nullable;

/**
 * The store's script calls and the waits for them: a policy's decisions on its algorithm's script, and groups of the
 * all-or-nothing script (several limits, refunds, charges), each through the batching layer when coalescing, where
 * concurrent ones share a call. Every wait ends by the store's timeout, and a call that times out before it is sent
 * is never sent.
 */
final class ScriptCalls implements SlotDecision.Calls, AutoCloseable {

	static final byte[] TAKE = RedisKeys.bytes("take");

	static final byte[] REFUND = RedisKeys.bytes("refund");

	static final byte[] CHARGE = RedisKeys.bytes("charge");

	private static final byte[] ONE = PolicyScript.bytes(1);

	private static final byte[] ZERO = PolicyScript.bytes(0);

	/** The all-or-nothing script's name of each algorithm, by ordinal. */
	private static final byte[][] ALGORITHM_CODES = algorithmCodes();

	private final ScriptExecutor executor;

	private final @Nullable Coalescer coalescer;

	/** The lanes of the all-or-nothing script's groups, when coalescing. */
	private final Coalescer.@Nullable Lanes<PendingGroup> groupLanes;

	private final PolicyScripts scripts;

	/** Whether one script call may only hold keys of one hash slot (a Cluster, or a topology not known). */
	private final boolean oneSlotPerCall;

	private final @Nullable TimeSource clock;

	private final byte[] leastTtl;

	private final Duration timeout;

	private final long timeoutNanos;

	private final Deadlines deadlines;

	private final LongAdder scriptCalls = new LongAdder();

	private final LongAdder decisions = new LongAdder();

	/**
	 * Set up the calls of one store.
	 * @param batching the batching layer's settings, or {@code null} to send every call on its own
	 */
	ScriptCalls(ScriptExecutor executor, RedisKeys keys, PolicyVersions versions, boolean oneSlotPerCall,
			@Nullable TimeSource clock, byte[] leastTtl, Duration timeout, Deadlines deadlines,
			@Nullable Batching batching) {
		this.executor = executor;
		this.timeout = timeout;
		this.timeoutNanos = timeout.toNanos();
		this.coalescer = (batching != null) ? new Coalescer(this::send, oneSlotPerCall, this.timeoutNanos,
				batching.maxBatchSize(), batching.maxInFlight(), batching.threadName()) : null;
		this.groupLanes = (this.coalescer != null) ? this.coalescer.lanes(this::sendGroups, oneSlotPerCall) : null;
		this.scripts = new PolicyScripts(keys, leastTtl, this.coalescer, versions, clock);
		this.oneSlotPerCall = oneSlotPerCall;
		this.clock = clock;
		this.leastTtl = leastTtl;
		this.deadlines = deadlines;
	}

	/** The batching layer's settings: the most decisions a call, the calls of a lane in flight, the watchdog's name. */
	record Batching(int maxBatchSize, int maxInFlight, String threadName) {
	}

	/** What is kept per policy for these calls. */
	PolicyScripts scripts() {
		return this.scripts;
	}

	/** Start the batching layer's watchdog, if batching, so that the first decisions do not wait for it. */
	void start() {
		if (this.coalescer != null) {
			this.coalescer.start();
		}
	}

	private static byte[][] algorithmCodes() {
		byte[][] codes = new byte[Algorithm.values().length][];
		for (Algorithm algorithm : Algorithm.values()) {
			codes[algorithm.ordinal()] = RedisKeys.bytes(RateLimitScript.code(algorithm));
		}
		return codes;
	}

	/**
	 * Decide one request on its policy's script, batched with the policy's concurrent ones, and wait for the answer
	 * until the timeout since {@code start}.
	 */
	Decision decide(PolicyScript script, String key, long cost, long start) {
		RateLimitPolicy policy = script.policy;
		PendingDecision call = new PendingDecision(script.layout.keys(key), cost, start);
		try {
			Coalescer.Lanes<PendingDecision> lanes = script.lanes;
			if (lanes != null && this.coalescer != null) {
				return this.coalescer.decide(lanes, call);
			}
			send(script, List.of(call));
			return call.result.get(Math.max(0, this.timeoutNanos - (System.nanoTime() - start)), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			call.abandoned = true;
			throw timedOut("policy '" + policy.name() + "'");
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			if (cause == Coalescer.OVERDUE) {
				throw timedOut("policy '" + policy.name() + "'");
			}
			throw failed("policy '" + policy.name() + "'", cause);
		}
		catch (InterruptedException ex) {
			call.abandoned = true;
			Thread.currentThread().interrupt();
			throw new RateLimitStoreException("Interrupted while waiting for Redis for policy '" + policy.name() + "'",
					ex);
		}
	}

	/**
	 * Send one call of a policy's script for the batch; the future completes once each decision of the batch is
	 * completed. The coalescer's sender of policies' lanes.
	 */
	CompletableFuture<?> send(PolicyScript script, List<PendingDecision> batch) {
		int keysPerCall = batch.get(0).keys.length;
		byte[][] keys = new byte[batch.size() * keysPerCall][];
		byte[][] args = new byte[script.args.length + batch.size()][];
		System.arraycopy(script.args, 0, args, 0, script.args.length);
		CalendarWindow calendar = script.policy.calendar();
		long epochNow = (calendar != null) ? currentTimeMillis() : 0;
		long windowNow = (calendar != null) ? calendar.windowTime(epochNow) : 0;
		args[0] = (calendar != null) ? PolicyScript.bytes(windowNow) : now();
		for (int i = 0; i < batch.size(); i++) {
			PendingDecision call = batch.get(i);
			System.arraycopy(call.keys, 0, keys, i * keysPerCall, keysPerCall);
			args[script.args.length + i] = (call.cost == 1) ? ONE : PolicyScript.bytes(call.cost);
		}
		this.scriptCalls.increment();
		this.decisions.add(batch.size());
		return execute(script.script, keys, args).whenComplete((answers, failure) -> completed(script, batch, answers,
				failure, windowNow, epochNow));
	}

	private static void completed(PolicyScript script, List<PendingDecision> batch, @Nullable List<Object> answers,
			@Nullable Throwable failure, long windowNow, long epochNow) {
		CalendarWindow calendar = script.policy.calendar();
		long capacity = script.policy.capacity();
		for (int i = 0; i < batch.size(); i++) {
			PendingDecision call = batch.get(i);
			if (failure != null || answers == null || answers.size() < 5 * batch.size()) {
				call.result.completeExceptionally((failure != null) ? failure
						: new IllegalStateException("unexpected reply from the rate limit script: " + answers));
			}
			else {
				int offset = 5 * i;
				long remaining = Math.max(0, Math.min(capacity, number(answers, offset + 1)));
				Decision decision = new Decision(number(answers, offset) == 1, capacity, remaining,
						number(answers, offset + 2), number(answers, offset + 3), number(answers, offset + 4),
						Decision.Origin.STORE);
				call.result.complete((calendar != null) ? calendar.toEpochTime(decision, windowNow, epochNow)
						: decision);
			}
		}
	}

	private static long number(List<Object> answers, int index) {
		return ((Number) answers.get(index)).longValue();
	}

	/**
	 * The groups an all-or-nothing decision of these acquisitions needs: one, or on a Cluster one per hash slot, as
	 * indexes into the list.
	 */
	List<List<Integer>> groupBySlot(List<Acquisition> acquisitions) {
		List<Integer> all = new ArrayList<>(acquisitions.size());
		for (int i = 0; i < acquisitions.size(); i++) {
			all.add(i);
		}
		if (!this.oneSlotPerCall || acquisitions.size() == 1) {
			return List.of(all);
		}
		Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
		for (int i = 0; i < acquisitions.size(); i++) {
			Acquisition acquisition = acquisitions.get(i);
			int slot = RedisKeys.slot(this.scripts.of(acquisition.policy()).layout.keys(acquisition.key())[0]);
			bySlot.computeIfAbsent(slot, (s) -> new ArrayList<>()).add(i);
		}
		return new ArrayList<>(bySlot.values());
	}

	/**
	 * Queue the groups of one request's decision (one per hash slot) together: requests whose groups span two slots
	 * then reach both in the same order, so that at a limit the same requests pass on both, rather than each slot
	 * admitting others and every request being rejected by one of them.
	 */
	@Override
	public List<CompletableFuture<List<Object>>> take(List<Acquisition> acquisitions, List<List<Integer>> groups) {
		List<PendingGroup> pending = new ArrayList<>(groups.size());
		for (List<Integer> group : groups) {
			pending.add(pendingGroup(TAKE, acquisitions, group, null));
		}
		submit(pending);
		List<CompletableFuture<List<Object>>> results = new ArrayList<>(pending.size());
		for (PendingGroup group : pending) {
			results.add(group.result);
		}
		return results;
	}

	/**
	 * Queue one group of the all-or-nothing script (entries of one hash slot, to take together, give back or charge)
	 * in the batching layer, where concurrent groups go as one script call.
	 */
	@Override
	public CompletableFuture<List<Object>> call(byte[] mode, List<Acquisition> acquisitions, List<Integer> group,
			long @Nullable [] times) {
		PendingGroup pending = pendingGroup(mode, acquisitions, group, times);
		submit(List.of(pending));
		return pending.result;
	}

	private void submit(List<PendingGroup> groups) {
		Coalescer.Lanes<PendingGroup> lanes = this.groupLanes;
		if (this.coalescer != null && lanes != null) {
			this.coalescer.submitTogether(lanes, groups);
		}
		else {
			for (PendingGroup group : groups) {
				sendGroups(List.of(group));
			}
		}
	}

	private PendingGroup pendingGroup(byte[] mode, List<Acquisition> acquisitions, List<Integer> group,
			long @Nullable [] times) {
		List<byte[]> keys = new ArrayList<>(group.size() * 2);
		byte[][] args = new byte[2 + 8 * group.size()][];
		args[0] = mode;
		args[1] = (group.size() == 1) ? ONE : PolicyScript.bytes(group.size());
		int a = 2;
		int weight = 0;
		for (int i : group) {
			Acquisition acquisition = acquisitions.get(i);
			PolicyScript script = this.scripts.of(acquisition.policy());
			Collections.addAll(keys, script.layout.keys(acquisition.key()));
			args[a++] = ALGORITHM_CODES[acquisition.policy().algorithm().ordinal()];
			System.arraycopy(script.args, 1, args, a, 5);
			a += 5;
			args[a++] = (acquisition.cost() == 1) ? ONE : PolicyScript.bytes(acquisition.cost());
			CalendarWindow calendar = acquisition.policy().calendar();
			if (calendar != null) {
				// The script counts a calendar window on its window time, which a take is sent at, as Redis's TIME
				// knows no time zone.
				args[a++] = PolicyScript.bytes(calendar.windowTime((times != null) ? times[i] : currentTimeMillis()));
			}
			else {
				args[a++] = (times != null) ? PolicyScript.bytes(times[i]) : ZERO;
			}
			weight += (this.coalescer != null) ? this.coalescer.weight(acquisition.policy()) : 1;
		}
		return new PendingGroup(keys.toArray(new byte[0][]), args, group.size(), mode == TAKE, System.nanoTime(),
				weight);
	}

	/**
	 * Send groups of the all-or-nothing script as one call; the future completes once each group is completed, with
	 * its own answers or the error that stopped it.
	 */
	private CompletableFuture<?> sendGroups(List<PendingGroup> batch) {
		int keyCount = 0;
		int argCount = 2;
		int entries = 0;
		for (PendingGroup group : batch) {
			keyCount += group.keys.length;
			argCount += group.args.length;
			entries += group.entries;
		}
		byte[][] keys = new byte[keyCount][];
		byte[][] args = new byte[argCount][];
		args[0] = now();
		args[1] = this.leastTtl;
		int k = 0;
		int a = 2;
		for (PendingGroup group : batch) {
			System.arraycopy(group.keys, 0, keys, k, group.keys.length);
			k += group.keys.length;
			System.arraycopy(group.args, 0, args, a, group.args.length);
			a += group.args.length;
		}
		this.scriptCalls.increment();
		this.decisions.add(entries);
		return execute(RateLimitScript.ALL_OR_NOTHING, keys, args)
			.whenComplete((answers, failure) -> answered(batch, answers, failure));
	}

	private static void answered(List<PendingGroup> batch, @Nullable List<Object> answers,
			@Nullable Throwable failure) {
		int offset = 0;
		for (PendingGroup group : batch) {
			if (failure != null || answers == null) {
				group.result.completeExceptionally((failure != null) ? failure
						: new IllegalStateException("no reply from the rate limit script"));
				continue;
			}
			Object status = (offset < answers.size()) ? answers.get(offset) : null;
			int size = group.take ? 6 * group.entries : 0;
			if (status instanceof Number number && number.longValue() == 0 && offset + 1 + size <= answers.size()) {
				group.result.complete(answers.subList(offset + 1, offset + 1 + size));
				offset += 1 + size;
			}
			else if (status instanceof byte[] || status instanceof String) {
				String message = (status instanceof byte[] bytes) ? new String(bytes, StandardCharsets.UTF_8)
						: (String) status;
				group.result.completeExceptionally(new RateLimitStoreException(message));
				offset += 1;
			}
			else {
				// Out of step with the reply: this group and those after it cannot be told apart.
				group.result.completeExceptionally(
						new IllegalStateException("unexpected reply from the rate limit script: " + answers));
				offset = Integer.MAX_VALUE / 2;
			}
		}
	}

	/** The time calendar windows are counted at: the injected clock's, or this machine's. */
	private long currentTimeMillis() {
		return (this.clock != null) ? this.clock.currentTimeMillis() : System.currentTimeMillis();
	}

	/** The time argument of a call: the injected clock's, or empty for Redis's own {@code TIME}. */
	private byte[] now() {
		return (this.clock != null) ? PolicyScript.bytes(this.clock.currentTimeMillis()) : PolicyScript.EMPTY;
	}

	private CompletableFuture<List<Object>> execute(RateLimitScript script, byte[][] keys, byte[][] args) {
		try {
			return this.executor.execute(script, keys, args);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Wait for the call's answer until the timeout since {@code start}.
	 * @throws RateLimitStoreException when it fails or does not come in time
	 */
	List<Object> await(CompletableFuture<List<Object>> call, long start, String what) {
		try {
			return call.get(Math.max(0, this.timeoutNanos - (System.nanoTime() - start)), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			call.completeExceptionally(ex); // not sent if it still waits in its lane
			throw timedOut(what);
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			throw (cause == Coalescer.OVERDUE) ? timedOut(what) : failed(what, cause);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new RateLimitStoreException("Interrupted while waiting for Redis for " + what, ex);
		}
	}

	/**
	 * The call's answer, or its failure as {@link #await} would throw it, by the decision's deadline: what
	 * {@code await} is to a thread that waits, without one.
	 */
	CompletableFuture<List<Object>> within(CompletableFuture<List<Object>> call, long start, String what) {
		// The call itself times out: one still waiting in its lane is then not sent, as for a thread that stopped
		// waiting for it; one in flight that answers late is counted, and its caller was told it failed. The
		// coalescer's watchdog fails overdue calls; without it, a deadline of the call's own does.
		if (this.coalescer == null || !this.coalescer.isWatchdogRunning()) {
			this.deadlines.failAfter(call, this.timeoutNanos - (System.nanoTime() - start));
		}
		return call.handle((answers, failure) -> {
			if (failure == null) {
				return answers;
			}
			Throwable cause = unwrap(failure);
			throw (cause instanceof TimeoutException || cause == Coalescer.OVERDUE) ? timedOut(what)
					: failed(what, cause);
		});
	}

	static RuntimeException storeFailure(Throwable failure) {
		return (failure instanceof RuntimeException ex) ? ex
				: new RateLimitStoreException("Redis failed: " + failure.getMessage(), failure);
	}

	static Throwable unwrap(Throwable failure) {
		Throwable cause = failure;
		while ((cause instanceof CompletionException || cause instanceof ExecutionException)
				&& cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

	RateLimitStoreException timedOut(String what) {
		return new RateLimitStoreException("Redis did not answer within " + this.timeout.toMillis() + "ms for " + what);
	}

	static RateLimitStoreException failed(String what, Throwable cause) {
		if (isOutOfMemory(cause)) {
			return new RateLimitStoreException("Redis is out of memory (maxmemory reached, and its "
					+ "maxmemory-policy may not evict these keys): it refuses every write, so no decision for " + what
					+ " can be made until memory is freed. Give rate limits a Redis of their own, or "
					+ "set maxmemory-policy to volatile-ttl (see docs/reliability.md).", cause);
		}
		return new RateLimitStoreException("Redis failed to decide for " + what + ": " + cause.getMessage(), cause);
	}

	/**
	 * Whether Redis refused a write for want of memory ({@code OOM command not allowed when used memory >
	 * 'maxmemory'}), inside a script or not.
	 */
	static boolean isOutOfMemory(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			String message = cause.getMessage();
			if (message != null && (message.startsWith("OOM ") || message.contains("ERR OOM ")
					|| message.contains("OOM command not allowed"))) {
				return true;
			}
		}
		return false;
	}

	long scriptCalls() {
		return this.scriptCalls.sum();
	}

	long decisions() {
		return this.decisions.sum();
	}

	@Override
	public void close() {
		if (this.coalescer != null) {
			this.coalescer.close();
		}
		this.deadlines.close();
	}

}
