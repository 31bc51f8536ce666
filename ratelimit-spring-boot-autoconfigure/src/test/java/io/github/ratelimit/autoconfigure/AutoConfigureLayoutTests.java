package io.github.ratelimit.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaMethod;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.architecture.LayoutRules;
import io.github.ratelimit.web.ClientIpResolver;
import io.github.ratelimit.web.RateLimitHeadersWriter;
import io.github.ratelimit.web.RateLimitPlanResolver;
import org.aopalliance.intercept.MethodInterceptor;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.web.method.support.HandlerMethodArgumentResolver;
import org.springframework.web.servlet.HandlerInterceptor;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.methods;
import static org.assertj.core.api.Assertions.assertThat;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The auto-configuration follows Spring Boot's own rules, and only configures: what runs per request lives in the
 * engine and its web stacks' modules.
 */
class AutoConfigureLayoutTests {

	private final JavaClasses autoconfigure = LayoutRules.productionClasses("io.github.ratelimit.autoconfigure");

	@Test
	void theAutoConfigurationHasNoPackageCycles() {
		LayoutRules.noPackageCycles().check(LayoutRules.productionClasses("io.github.ratelimit"));
	}

	@Test
	void beanMethodsArePackagePrivate() {
		methods().that().areAnnotatedWith(Bean.class).should().notBePublic().andShould().notBeProtected()
			.check(this.autoconfigure);
	}

	@Test
	void everyBeanAnApplicationMayReplaceBacksOffForTheApplicationsOwn() {
		methods().that().areAnnotatedWith(Bean.class).and().areNotStatic().should(backOff())
			.check(this.autoconfigure);
	}

	@Test
	void beanPostProcessorsAreDeclaredByStaticMethodsSoTheyCreateNothingEarly() {
		methods().that().areAnnotatedWith(Bean.class).and().haveRawReturnType(assignableTo(BeanPostProcessor.class))
			.should().beStatic()
			.check(this.autoconfigure);
	}

	@Test
	void noTypeOfTheAutoConfigurationIsOnARequestsPath() {
		noClasses().should().implement(RateLimitListener.class)
			.orShould().implement(RateLimitHeadersWriter.class)
			.orShould().implement(ClientIpResolver.class)
			.orShould().implement(RateLimitPlanResolver.class)
			.orShould().implement(MethodInterceptor.class)
			.orShould().implement(HandlerInterceptor.class)
			.orShould().implement(HandlerMethodArgumentResolver.class)
			.orShould().implement(jakarta.servlet.Filter.class)
			.orShould().implement("org.springframework.web.server.WebFilter")
			.orShould().implement("org.springframework.web.server.WebExceptionHandler")
			.orShould().implement("org.springframework.web.reactive.result.method.HandlerMethodArgumentResolver")
			.orShould().implement("org.springframework.cloud.gateway.filter.ratelimit.RateLimiter")
			.orShould().implement("org.springframework.cloud.gateway.filter.ratelimit.KeyResolver")
			.orShould().implement("io.github.ratelimit.engine.TenantLimitsSource")
			.check(this.autoconfigure);
	}

	/**
	 * What Spring Boot does stays small: request-time logic and everything a request meets live in the engine and the
	 * web stacks' modules, so that this module only declares beans from properties, and says at start-up what went
	 * wrong (failure analyzers) or what is limited (the start-up report).
	 */
	@Test
	void theAutoConfigurationStaysWithinItsSizeOf2750Lines() throws IOException {
		long lines;
		try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
			lines = files.filter((file) -> file.toString().endsWith(".java")).mapToLong((file) -> {
				try (Stream<String> fileLines = Files.lines(file)) {
					return fileLines.count();
				}
				catch (IOException ex) {
					throw new UncheckedIOException(ex);
				}
			}).sum();
		}
		assertThat(lines).isPositive().isLessThanOrEqualTo(2_750);
	}

	/** The method, or the configuration class declaring it, says {@code @ConditionalOnMissingBean}. */
	private static ArchCondition<JavaMethod> backOff() {
		return new ArchCondition<>("be @ConditionalOnMissingBean (or declared in a class that is)") {

			@Override
			public void check(JavaMethod method, ConditionEvents events) {
				boolean backsOff = method.isAnnotatedWith(ConditionalOnMissingBean.class)
						|| method.getOwner().isAnnotatedWith(ConditionalOnMissingBean.class);
				events.add(new SimpleConditionEvent(method, backsOff, method.getFullName()));
			}

		};
	}

	private static DescribedPredicate<com.tngtech.archunit.core.domain.JavaClass> assignableTo(Class<?> type) {
		return com.tngtech.archunit.core.domain.JavaClass.Predicates.assignableTo(type);
	}

}
