package io.github.ratelimit.sample.gateway;

import io.github.ratelimit.test.NoBlockingOnEventLoops;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gateway sample's start-up log: one INFO line with each route and the policy that limits it, naming the route
 * without a limit, so that no route is left unlimited unseen.
 */
@ExtendWith(OutputCaptureExtension.class)
@ExtendWith(NoBlockingOnEventLoops.class)
class RouteLimitsAtStartUpTests {

	@Test
	void everyRouteIsListedAtStartUpWithThePolicyThatLimitsItAndTheRouteWithoutOneIsNamed(CapturedOutput output) {
		try (ConfigurableApplicationContext app = SpringApplication.run(SampleGatewayApplication.class,
				"--server.port=0", "--spring.data.redis.port=1", "--upstream.uri=http://127.0.0.1:1",
				"--ratelimit.policies.orders.algorithm=token-bucket")) {
			assertThat(output.getOut().lines().filter((line) -> line.contains("Rate limits of the gateway's routes")))
				.singleElement()
				.satisfies((line) -> assertThat(line).contains(" INFO ")
					.endsWith("Rate limits of the gateway's routes: 'resources' by policy 'resources' (FIXED 5 per 1m), "
							+ "'orders' by policy 'orders' (TOKEN_BUCKET 10 per 1m, burst 10); without a limit: 'api'"));
		}
	}

}
