package io.github.ratelimit.limiter;

import java.lang.reflect.Field;
import java.time.Duration;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.conformance.SharedInMemoryStore;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A reset reaching an instance marks its block dropped a moment before the block leaves the instance's map: a request
 * that finds the block then must not take a new block of units into it, where they would lapse unused (seen once as
 * a drain of 19 of 30 after a reset, where a block less, 20, is the most a reset may cost).
 */
class DroppedLeaseBlockTests {

	private final MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:01Z");

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "SLIDING_LOG", "CONCURRENCY" }, mode = EnumSource.Mode.EXCLUDE)
	void aBlockMarkedDroppedButNotYetForgottenTakesNoMoreUnitsFromTheStore(Algorithm algorithm) throws Exception {
		InMemoryRateLimitStore memory = InMemoryRateLimitStore.builder().clock(this.clock).build();
		LeasingStore leasing = new LeasingStore(new SharedInMemoryStore(memory), this.clock);
		RateLimitPolicy policy = RateLimitPolicy.builder("dropped").algorithm(algorithm).limit(30)
			.window(Duration.ofMinutes(1)).lease(10).build();
		for (int i = 0; i < 5; i++) {
			assertThat(leasing.tryAcquire(policy, "k", 1).allowed()).isTrue();
		}
		LeaseBlock block = blocks(leasing).get(policy, "k");
		assertThat(block).isNotNull();
		// What the reset's listener does first: mark the block and its grant; the map forgets the block after.
		synchronized (block) {
			block.dropped = true;
			if (block.grant != null) {
				block.grant.dropped = true;
			}
		}
		long left = memory.peek(policy, "k").remaining();
		long drained = 0;
		while (leasing.tryAcquire(policy, "k", 1).allowed()) {
			drained++;
		}
		assertThat(drained).as("the units the store had left when the block was dropped").isEqualTo(left);
	}

	private static LeaseBlocks blocks(LeasingStore leasing) throws ReflectiveOperationException {
		Field field = LeasingStore.class.getDeclaredField("blocks");
		field.setAccessible(true);
		return (LeaseBlocks) field.get(leasing);
	}

}
