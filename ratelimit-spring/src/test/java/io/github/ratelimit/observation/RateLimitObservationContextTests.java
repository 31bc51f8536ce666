package io.github.ratelimit.observation;

import java.time.Duration;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The context's low-cardinality key values are always what was added and not removed, whichever way they were.
 */
class RateLimitObservationContextTests {

	private final DefaultRateLimitObservationConvention convention = new DefaultRateLimitObservationConvention();

	private final RateLimitPolicy policy = RateLimitPolicy.builder("orders").limit(10).window(Duration.ofMinutes(1)).build();

	@Test
	void theConventionsKeyValuesAtStopReplaceThoseAtStartAndAreHandedOutAsGivenNotRebuilt() {
		RateLimitObservationContext context = observed(ObservationRegistry.create(), (observation) -> {
		});
		assertThat(context.getLowCardinalityKeyValues())
			.isEqualTo(KeyValues.of("outcome", "allowed", "policy", "orders", "store", "memory"))
			.isSameAs(this.convention.getLowCardinalityKeyValues(context));
	}

	@Test
	void keyValuesAFilterAddsAtStopAreKept() {
		ObservationRegistry registry = ObservationRegistry.create();
		registry.observationConfig()
			.observationFilter((context) -> context.addLowCardinalityKeyValues(KeyValues.of("region", "eu")));
		RateLimitObservationContext context = observed(registry, (observation) -> {
		});
		assertThat(context.getLowCardinalityKeyValues())
			.isEqualTo(KeyValues.of("outcome", "allowed", "policy", "orders", "region", "eu", "store", "memory"));
	}

	@Test
	void keyValuesAddedOrRemovedOneByOneAreSeen() {
		RateLimitObservationContext context = observed(ObservationRegistry.create(),
				(observation) -> observation.lowCardinalityKeyValue("tenant", "acme"));
		assertThat(context.getLowCardinalityKeyValues())
			.isEqualTo(KeyValues.of("outcome", "allowed", "policy", "orders", "store", "memory", "tenant", "acme"));
		context.removeLowCardinalityKeyValue("tenant");
		assertThat(context.getLowCardinalityKeyValues())
			.isEqualTo(KeyValues.of("outcome", "allowed", "policy", "orders", "store", "memory"));
		context.addLowCardinalityKeyValue(KeyValue.of("outcome", "changed"));
		context.removeLowCardinalityKeyValues("store");
		assertThat(context.getLowCardinalityKeyValues())
			.isEqualTo(KeyValues.of("outcome", "changed", "policy", "orders"));
	}

	@Test
	void aFilterAddingNoKeyValuesChangesNothing() {
		ObservationRegistry registry = ObservationRegistry.create();
		registry.observationConfig().observationFilter((context) -> context.addLowCardinalityKeyValues(KeyValues.empty()));
		RateLimitObservationContext context = observed(registry, (observation) -> {
		});
		assertThat(context.getLowCardinalityKeyValues())
			.isEqualTo(KeyValues.of("outcome", "allowed", "policy", "orders", "store", "memory"))
			.isSameAs(this.convention.getLowCardinalityKeyValues(context));
	}

	@Test
	void aKeyValueIsFoundByItsKeyWhereverTheContextKeepsThem() {
		RateLimitObservationContext context = observed(ObservationRegistry.create(), (observation) -> {
		});
		assertThat(context.getLowCardinalityKeyValue("policy")).isEqualTo(KeyValue.of("policy", "orders"));
		assertThat(context.getLowCardinalityKeyValue("tenant")).isNull();
		context.addLowCardinalityKeyValue(KeyValue.of("tenant", "acme"));
		assertThat(context.getLowCardinalityKeyValue("policy")).isEqualTo(KeyValue.of("policy", "orders"));
		assertThat(context.getLowCardinalityKeyValue("tenant")).isEqualTo(KeyValue.of("tenant", "acme"));
	}

	@Test
	void keyValuesWithOtherKeysAreMergedWithThoseHeld() {
		RateLimitObservationContext context = new RateLimitObservationContext(this.policy, "memory");
		context.addLowCardinalityKeyValues(KeyValues.of("a", "1", "b", "2"));
		context.addLowCardinalityKeyValues(KeyValues.of("b", "3", "c", "4"));
		assertThat(context.getLowCardinalityKeyValues()).isEqualTo(KeyValues.of("a", "1", "b", "3", "c", "4"));
		context.addLowCardinalityKeyValues(KeyValues.of("a", "5", "b", "6", "c", "7"));
		assertThat(context.getLowCardinalityKeyValues()).isEqualTo(KeyValues.of("a", "5", "b", "6", "c", "7"));
	}

	private RateLimitObservationContext observed(ObservationRegistry registry,
			java.util.function.Consumer<Observation> whileDeciding) {
		registry.observationConfig().observationHandler((context) -> true);
		RateLimitObservationContext context = new RateLimitObservationContext(this.policy, "memory");
		Observation observation = Observation
			.createNotStarted(null, this.convention, () -> context, registry)
			.start();
		assertThat(context.getLowCardinalityKeyValues())
			.isEqualTo(KeyValues.of("outcome", "unknown", "policy", "orders", "store", "memory"));
		whileDeciding.accept(observation);
		context.setDecision(Decision.allowed(10, 9, 60_000));
		observation.stop();
		return context;
	}

}
