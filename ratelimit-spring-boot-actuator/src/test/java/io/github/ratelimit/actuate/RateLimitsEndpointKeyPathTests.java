package io.github.ratelimit.actuate;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The key a read or a reset names, from the segments each of Spring Boot's web mappings gives the endpoint: over
 * HTTP, {@code /actuator/ratelimits/orders/user-42} names the key {@code user-42} of {@code orders} on both stacks.
 */
class RateLimitsEndpointKeyPathTests {

	@Test
	void springMvcAndJmxGiveTheKeysSegmentsAlone() {
		assertThat(RateLimitsEndpoint.keyOf("orders", new String[] { "user-42" })).isEqualTo("user-42");
		assertThat(RateLimitsEndpoint.keyOf("resources", new String[] { "2001:db8:0:0:0:0:0:0", "64" }))
			.isEqualTo("2001:db8:0:0:0:0:0:0/64");
	}

	@Test
	void webFluxGivesThePolicysSegmentFirstWhichIsNotPartOfTheKey() {
		assertThat(RateLimitsEndpoint.keyOf("orders", new String[] { "orders", "user-42" })).isEqualTo("user-42");
		assertThat(RateLimitsEndpoint.keyOf("resources", new String[] { "resources", "2001:db8:0:0:0:0:0:0", "64" }))
			.isEqualTo("2001:db8:0:0:0:0:0:0/64");
		assertThat(RateLimitsEndpoint.keyOf("orders", new String[] { "orders", "orders" }))
			.as("a key that is the policy's name")
			.isEqualTo("orders");
	}

}
