package io.github.ratelimit.aop;

import java.security.Principal;

import io.github.ratelimit.annotation.RateLimited;
import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.beans.factory.aot.BeanFactoryInitializationAotContribution;
import org.springframework.beans.factory.aot.BeanFactoryInitializationAotProcessor;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.javapoet.ClassName;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitedRuntimeHintsTests {

	@Test
	void rateLimitedBeanClassesAndWhatKeysUsuallyCallGetReflectionHints() {
		DefaultListableBeanFactory beanFactory = new DefaultListableBeanFactory();
		beanFactory.registerBeanDefinition("limited", new RootBeanDefinition(Limited.class));
		beanFactory.registerBeanDefinition("plain", new RootBeanDefinition(Plain.class));
		DefaultGenerationContext generationContext = new DefaultGenerationContext(
				new ClassNameGenerator(ClassName.get(getClass())), new InMemoryGeneratedFiles());
		BeanFactoryInitializationAotProcessor processor = SpringFactoriesLoader
			.forResourceLocation("META-INF/spring/aot.factories")
			.load(BeanFactoryInitializationAotProcessor.class)
			.stream()
			.filter(RateLimitedRuntimeHints.class::isInstance)
			.findFirst()
			.orElseThrow();
		BeanFactoryInitializationAotContribution contribution = processor.processAheadOfTime(beanFactory);
		assertThat(contribution).isNotNull();
		contribution.applyTo(generationContext, null);
		var hints = generationContext.getRuntimeHints();
		assertThat(RuntimeHintsPredicates.reflection().onType(Limited.class)
			.withMemberCategory(MemberCategory.INVOKE_DECLARED_METHODS)).accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(Plain.class)).rejects(hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(Principal.class)
			.withMemberCategory(MemberCategory.INVOKE_PUBLIC_METHODS)).accepts(hints);
	}

	@Test
	void aContextWithoutRateLimitedBeansStillGetsTheProxyOfConfiguredPolicies() {
		DefaultListableBeanFactory beanFactory = new DefaultListableBeanFactory();
		beanFactory.registerBeanDefinition("plain", new RootBeanDefinition(Plain.class));
		BeanFactoryInitializationAotContribution contribution = new RateLimitedRuntimeHints()
			.processAheadOfTime(beanFactory);
		assertThat(contribution).isNotNull();
		DefaultGenerationContext generationContext = new DefaultGenerationContext(
				new ClassNameGenerator(ClassName.get(getClass())), new InMemoryGeneratedFiles());
		contribution.applyTo(generationContext, null);
		var hints = generationContext.getRuntimeHints();
		// Annotations are read through JDK proxies.
		assertThat(RuntimeHintsPredicates.proxies().forInterfaces(RateLimited.class)).accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(Plain.class)).rejects(hints);
	}

	static class Limited {

		@RateLimited(limit = 1, window = "1s")
		public String hit() {
			return "ok";
		}

	}

	static class Plain {

		public String hit() {
			return "ok";
		}

	}

}
